using System;
using System.Collections.Generic;
using System.Globalization;
using System.IO;
using System.Linq;
using System.Net.Http;
using System.Runtime.Serialization.Json;
using System.Threading;
using System.Threading.Tasks;

namespace Laurel.Client.Tests
{
    /// <summary>
    /// Drives Laurel.Client against a live Laurel as a game server and a game client would, and
    /// writes what every call answered (or threw) to a JSON report. It asserts nothing itself:
    /// test/integration/csharp-client.test.ts compares the report with an independent model.
    /// Usage: mono LaurelClientTests.exe plan.json report.json
    /// </summary>
    public static class Program
    {
        public static int Main(string[] args)
        {
            if (args.Length != 2)
            {
                Console.Error.WriteLine("usage: LaurelClientTests.exe <plan.json> <report.json>");
                return 2;
            }
            try
            {
                var report = new Report();
                Run(ReadPlan(args[0]), report).GetAwaiter().GetResult();
                File.WriteAllText(args[1], report.ToJson());
                return 0;
            }
            catch (Exception err)
            {
                Console.Error.WriteLine(err);
                return 1;
            }
        }

        private static Plan ReadPlan(string path)
        {
            using (var stream = File.OpenRead(path))
            {
                return (Plan)new DataContractJsonSerializer(typeof(Plan)).ReadObject(stream);
            }
        }

        private static async Task Run(Plan plan, Report report)
        {
            // Laurel waits 5 s before answering that a batch is still pending: meanwhile, the rest.
            var pending = Pending(plan, report);
            // The reads go through an HttpClient of the caller's, which the client leaves open.
            using (var shared = new HttpClient())
            {
                using (var ingest = new LaurelClient(new LaurelClientOptions { BaseUrl = plan.BaseUrl, ApiKey = plan.IngestKey }))
                using (var read = new LaurelClient(new LaurelClientOptions { BaseUrl = plan.BaseUrl, ApiKey = plan.ReadKey, HttpClient = shared }))
                {
                    await Writes(plan, ingest, report);
                    await Reads(plan, read, ingest, report);
                    await PlayerTokens(plan, ingest, report);
                    await Refusals(plan, ingest, read, report);
                }
                var health = await shared.GetAsync(plan.BaseUrl + "/healthz");
                report.Add("sharedHttpClientAfterDispose", (int)health.StatusCode);
            }
            await Retries(plan, report);
            await TransportFailures(plan, report);
            await pending;
        }

        /// <summary>
        /// A Laurel whose workers are stopped: ?wait=true runs out, the batch stays queued.
        /// </summary>
        private static async Task Pending(Plan plan, Report report)
        {
            using (var idle = new LaurelClient(plan.Idle.BaseUrl, plan.Idle.IngestKey))
            {
                var events = Events(plan.Idle.Events);
                await report.Step("pending", () => idle.PostEventsAndWaitAsync(events));
                await report.Step("pending.status", () => idle.GetEventAsync(events[0].IdempotencyKey));
            }
        }

        /// <summary>Profiles and follows, then events: waited for, posted again, and queued.</summary>
        private static async Task Writes(Plan plan, LaurelClient ingest, Report report)
        {
            var profiles = new List<MemberProfile>();
            foreach (var p in plan.Profiles) profiles.Add(await ingest.PutMemberAsync(p.Member, p.DisplayName, p.Region));
            report.Add("profiles", profiles);
            await report.Step("following", () => ingest.PutFollowingAsync(plan.Follower, plan.Followed));

            for (var i = 0; i < plan.WaitBatches.Count; i++)
            {
                var batch = Events(plan.WaitBatches[i]);
                await report.Step("wait." + i, () => ingest.PostEventsAndWaitAsync(batch));
            }
            // The same events again, same keys: duplicates, counted once.
            await report.Step("duplicates", () => ingest.PostEventsAndWaitAsync(Events(plan.WaitBatches[0])));

            var queued = Events(plan.QueuedBatch);
            await report.Step("queued", () => ingest.PostEventsAsync(queued));
            report.Add("queuedStatuses", await UntilApplied(ingest, queued));
        }

        /// <summary>Asks each queued event's status until none is pending (10 s at most).</summary>
        private static async Task<List<EventStatus>> UntilApplied(LaurelClient ingest, List<ScoreEvent> events)
        {
            var deadline = DateTime.UtcNow.AddSeconds(10);
            for (;;)
            {
                var statuses = new List<EventStatus>();
                foreach (var e in events) statuses.Add(await ingest.GetEventAsync(e.IdempotencyKey, e.Board));
                if (statuses.All(s => s.Status != "pending") || DateTime.UtcNow > deadline) return statuses;
                await Task.Delay(50);
            }
        }

        private static async Task Reads(Plan plan, LaurelClient read, LaurelClient ingest, Report report)
        {
            var standings = new List<MemberStanding>();
            foreach (var member in plan.StandingOf) standings.Add(await read.GetMemberStandingAsync(plan.Board, member));
            report.Add("standing", standings);

            var pages = new List<StandingsPage>();
            foreach (var p in plan.Pages)
            {
                var query = new StandingsQuery
                {
                    Limit = p.Limit, Offset = p.Offset, Member = p.Member, Members = p.Members,
                    Category = p.Category, Region = p.Region,
                };
                pages.Add(await read.GetStandingsAsync(plan.Board, query));
            }
            report.Add("pages", pages);

            var around = new List<AroundMember>();
            foreach (var a in plan.Around) around.Add(await read.GetAroundMemberAsync(plan.Board, a.Member, a.Radius));
            report.Add("around", around);

            await report.Step("followingStandings", () => read.GetFollowingStandingsAsync(plan.Board, plan.Follower));

            var goals = new List<MemberGoals>();
            foreach (var member in plan.GoalsOf) goals.Add(await read.GetMemberGoalsAsync(plan.Board, member));
            report.Add("goals", goals);

            await report.Step("cutoffs", () => read.GetCutoffsAsync(plan.Board, plan.CutoffRanks, plan.CutoffPercents));
            // Percents as a game would hold them, with the scale of a computation (12.500000m).
            await report.Step("cutoffsScaled", () => read.GetCutoffsAsync(plan.Board, null, new[] { 12.500000m, 100.0000m }));
            var french = new Scope { Region = "FR" };
            await report.Step("cutoffsFR", () => read.GetCutoffsAsync(plan.Board, new[] { 1, 2 }, null, french));
            await report.Step("standingFR", () => read.GetMemberStandingAsync(plan.Board, plan.Follower, french));
            await report.Step("memberStandings", () => read.GetMemberStandingsAsync(plan.TokenMember));

            var first = plan.WaitBatches[0][0];
            await report.Step("event", () => ingest.GetEventAsync(first.IdempotencyKey, first.Board));
        }

        /// <summary>A game server mints a token; the game client reads with it.</summary>
        private static async Task PlayerTokens(Plan plan, LaurelClient ingest, Report report)
        {
            var minted = await report.Step("token", () => ingest.CreatePlayerTokenAsync(plan.TokenMember, 600));
            if (minted == null) return;
            using (var game = new LaurelClient(new LaurelClientOptions { BaseUrl = plan.BaseUrl, PlayerToken = minted.Token }))
            {
                await report.Step("token.standing", () => game.GetMemberStandingAsync(plan.Board, plan.TokenMember));
                await report.Step("token.ownStandings", () => game.GetMemberStandingsAsync(plan.TokenMember));
                await report.Step("token.ownProfile", () => game.GetMemberAsync(plan.TokenMember));
                await report.Step("token.otherOnBoard", () => game.GetMemberStandingAsync(plan.Board, plan.OtherMember));
                await report.Step("token.otherStandings", () => game.GetMemberStandingsAsync(plan.OtherMember));
                await report.Step("token.otherProfile", () => game.GetMemberAsync(plan.OtherMember));
                var cheat = new[] { new ScoreEvent(plan.Board, plan.TokenMember, 99999, "cs-cheat") };
                await report.Step("token.write", () => game.PostEventsAsync(cheat));
            }

            var asked = 0;
            var renewing = new LaurelClientOptions
            {
                BaseUrl = plan.BaseUrl,
                PlayerTokenProvider = async cancel =>
                {
                    await Task.Yield();
                    Interlocked.Increment(ref asked);
                    return minted.Token;
                },
            };
            using (var game = new LaurelClient(renewing))
            {
                await report.Step("provider.top", () => game.GetStandingsAsync(plan.Board, new StandingsQuery { Limit = 1 }));
                await report.Step("provider.goals", () => game.GetMemberGoalsAsync(plan.Board, plan.TokenMember));
            }
            report.Add("provider.asked", asked);
        }

        private static async Task Refusals(Plan plan, LaurelClient ingest, LaurelClient read, Report report)
        {
            await report.Step("invalid", () => ingest.PostEventsAsync(Events(plan.InvalidBatch)));
            var invalidKey = plan.InvalidBatch[0];
            await report.Step("invalid.first", () => ingest.GetEventAsync(invalidKey.IdempotencyKey, invalidKey.Board));
            await report.Step("unknownBoard", () => read.GetMemberStandingAsync("cs-no-such-board", plan.TokenMember));
            using (var stranger = new LaurelClient(plan.BaseUrl, "not-a-laurel-key"))
                await report.Step("badKey", () => stranger.GetStandingsAsync(plan.Board));
            await report.Step("readKeyPosts", () => read.PostEventsAsync(Events(plan.WaitBatches[0])));
            await report.Step("cutoffsWithoutValues", () => read.GetCutoffsAsync(plan.Board, null));

            var nested = new ScoreEvent(plan.Board, plan.TokenMember, 1, "cs-nested")
            {
                Metadata = new Dictionary<string, object> { { "loadout", new Dictionary<string, object> { { "gun", "bow" } } } },
            };
            await report.Step("nestedMetadata", () => ingest.PostEventsAsync(new[] { nested }));
            await report.Step("dotSegment", () => read.GetMemberStandingAsync(plan.Board, ".."));
            await report.Step("twoCredentials", () =>
            {
                new LaurelClient(new LaurelClientOptions { BaseUrl = plan.BaseUrl, ApiKey = "k", PlayerToken = "t" }).Dispose();
                return Task.FromResult("constructed");
            });
        }

        /// <summary>
        /// Events through a per-key rate limit (429) and through 503s: retried with the same body.
        /// </summary>
        private static async Task Retries(Plan plan, Report report)
        {
            using (var limited = new LaurelClient(plan.Limited.BaseUrl, plan.Limited.IngestKey))
            {
                var results = new List<EventResults>();
                foreach (var e in Events(plan.Limited.Events))
                    results.Add(await report.Step("limited." + e.IdempotencyKey, () => limited.PostEventsAndWaitAsync(new[] { e })));
                report.Add("limited", results);
            }

            var flakyOptions = new LaurelClientOptions
            {
                BaseUrl = plan.Flaky.BaseUrl, ApiKey = plan.IngestKey, RetryDelay = TimeSpan.FromMilliseconds(50),
            };
            using (var flaky = new LaurelClient(flakyOptions))
                await report.Step("flaky", () => flaky.PostEventsAndWaitAsync(Events(plan.Flaky.Events)));

            var downOptions = new LaurelClientOptions
            {
                BaseUrl = plan.Down.BaseUrl, ApiKey = plan.IngestKey, EventAttempts = 3, RetryDelay = TimeSpan.FromMilliseconds(10),
            };
            using (var down = new LaurelClient(downOptions))
                await report.Step("down", () => down.PostEventsAsync(Events(plan.Down.Events)));
        }

        /// <summary>
        /// No answer at all: a port nothing listens on, a server that never answers, the caller's
        /// cancellation.
        /// </summary>
        private static async Task TransportFailures(Plan plan, Report report)
        {
            var quickly = TimeSpan.FromMilliseconds(10);
            var refusedOptions = new LaurelClientOptions { BaseUrl = plan.ClosedUrl, EventAttempts = 2, RetryDelay = quickly };
            using (var refused = new LaurelClient(refusedOptions))
            {
                await report.Step("refused", () => refused.GetMemberStandingAsync(plan.Board, plan.TokenMember));
                var one = new[] { new ScoreEvent(plan.Board, plan.TokenMember, 1, "cs-refused") };
                await report.Step("refused.post", () => refused.PostEventsAsync(one));
            }

            var silentOptions = new LaurelClientOptions
            {
                BaseUrl = plan.SilentUrl, Timeout = TimeSpan.FromMilliseconds(300), EventAttempts = 2, RetryDelay = quickly,
            };
            using (var silent = new LaurelClient(silentOptions))
            {
                await report.Step("timeout", () => silent.GetStandingsAsync(plan.Board));
                var one = new[] { new ScoreEvent(plan.Board, plan.TokenMember, 1, "cs-silent") };
                await report.Step("timeout.post", () => silent.PostEventsAsync(one));
            }

            var patientOptions = new LaurelClientOptions { BaseUrl = plan.SilentUrl, Timeout = TimeSpan.FromSeconds(30) };
            using (var patient = new LaurelClient(patientOptions))
            using (var cancel = new CancellationTokenSource(TimeSpan.FromMilliseconds(150)))
            {
                var started = DateTime.UtcNow;
                await report.Step("cancelled", () => patient.GetStandingsAsync(plan.Board, null, cancel.Token));
                report.Add("cancelled.afterMs", (DateTime.UtcNow - started).TotalMilliseconds);
            }
        }

        private static List<ScoreEvent> Events(List<PlanEvent> plan)
        {
            return plan.Select(e => new ScoreEvent(e.Board, e.Member, e.Value, e.IdempotencyKey)
            {
                OccurredAt = e.OccurredAt == null
                    ? (DateTimeOffset?)null
                    : DateTimeOffset.Parse(e.OccurredAt, CultureInfo.InvariantCulture, DateTimeStyles.AssumeUniversal),
                Category = e.Category,
                Metadata = e.WithMetadata
                    ? new Dictionary<string, object> { { "map", "dust" }, { "kills", 7 }, { "ranked", true }, { "ratio", 1.5 }, { "note", null } }
                    : null,
            }).ToList();
        }
    }
}
