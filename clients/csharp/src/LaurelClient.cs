using System;
using System.Collections.Generic;
using System.Globalization;
using System.Linq;
using System.Net.Http;
using System.Threading;
using System.Threading.Tasks;

namespace Laurel.Client
{
    /// <summary>
    /// A client of the Laurel leaderboard API for game servers (with an API key) and game
    /// clients (with a player token). Every method is asynchronous and throws
    /// <see cref="LaurelException"/> for a failed request. <c>POST /v1/events</c> is retried on
    /// 503, 429 (after <c>Retry-After</c>), timeouts and network errors with the very same body,
    /// so the same idempotency keys: a batch whose answer was lost is counted once.
    /// One instance is safe to share between threads; dispose it when done.
    /// </summary>
    public sealed class LaurelClient : IDisposable
    {
        private readonly Transport transport;

        public LaurelClient(LaurelClientOptions options)
        {
            transport = new Transport(options);
        }

        /// <summary>A client with an API key (game servers and tools).</summary>
        public LaurelClient(string baseUrl, string apiKey)
            : this(new LaurelClientOptions { BaseUrl = baseUrl, ApiKey = apiKey })
        {
        }

        /// <summary>
        /// <c>POST /v1/events</c>: queues the batch (1-1000 events) and answers once it is queued, not
        /// applied.
        /// </summary>
        public async Task<EventsAccepted> PostEventsAsync(
            IEnumerable<ScoreEvent> events, CancellationToken cancellationToken = default(CancellationToken))
        {
            var answer = await PostEventBatchAsync("/v1/events", events, cancellationToken).ConfigureAwait(false);
            return Transport.Read<EventsAccepted>(answer);
        }

        /// <summary>
        /// <c>POST /v1/events?wait=true</c>: the results once the batch is applied, one per event in
        /// the order posted (a repeat answers <c>duplicate</c>). When Laurel could not apply it within
        /// its wait (5 s) the batch stays queued and will be applied; this throws a LaurelException
        /// <c>pending</c> (status 202): ask <see cref="GetEventAsync"/> later.
        /// </summary>
        public async Task<EventResults> PostEventsAndWaitAsync(
            IEnumerable<ScoreEvent> events, CancellationToken cancellationToken = default(CancellationToken))
        {
            var answer = await PostEventBatchAsync("/v1/events?wait=true", events, cancellationToken).ConfigureAwait(false);
            if (answer.Status == 202)
            {
                var queued = Transport.Read<EventsAccepted>(answer);
                throw new LaurelException(202, LaurelException.PendingError,
                    "the batch was not applied within the wait and stays queued (job " + (queued.JobId ?? "?") + ")");
            }
            return Transport.Read<EventResults>(answer);
        }

        /// <summary>
        /// <c>GET /v1/events/{key}</c> (ingest): <c>pending</c>, <c>applied</c>, <c>voided</c> or
        /// <c>rejected</c>. Give the board when the same key may be on several (otherwise a 409 <c>ambiguous_key</c>).
        /// </summary>
        public Task<EventStatus> GetEventAsync(
            string idempotencyKey, string board = null, CancellationToken cancellationToken = default(CancellationToken))
        {
            var query = new Query().Add("board", board);
            return GetAsync<EventStatus>("/v1/events/" + Url.Segment(idempotencyKey) + query, cancellationToken);
        }

        /// <summary>
        /// <c>PUT /v1/members/{id}</c> (ingest): sets the display name and region; a null argument
        /// leaves it unchanged.
        /// </summary>
        public Task<MemberProfile> PutMemberAsync(
            string memberId, string displayName = null, string region = null,
            CancellationToken cancellationToken = default(CancellationToken))
        {
            var body = Json.Write(new MemberUpdate { DisplayName = displayName, Region = region });
            return SendAsync<MemberProfile>(HttpMethod.Put, "/v1/members/" + Url.Segment(memberId), body, cancellationToken);
        }

        /// <summary>
        /// <c>PUT /v1/members/{id}/following</c> (ingest): replaces whom the member follows (at most
        /// 1000).
        /// </summary>
        public Task<FollowingList> PutFollowingAsync(
            string memberId, IEnumerable<string> memberIds, CancellationToken cancellationToken = default(CancellationToken))
        {
            if (memberIds == null) throw new ArgumentNullException("memberIds");
            var body = Json.Write(new FollowingUpdate { MemberIds = memberIds.ToList() });
            var path = "/v1/members/" + Url.Segment(memberId) + "/following";
            return SendAsync<FollowingList>(HttpMethod.Put, path, body, cancellationToken);
        }

        /// <summary>
        /// <c>POST /v1/player-tokens</c> (ingest, game servers): a token for one member's game
        /// client, valid <paramref name="ttlSeconds"/> (60-86400, Laurel's default 3600).
        /// </summary>
        public Task<PlayerToken> CreatePlayerTokenAsync(
            string memberId, int? ttlSeconds = null, CancellationToken cancellationToken = default(CancellationToken))
        {
            var body = Json.Write(new PlayerTokenRequest { Member = memberId, TtlSeconds = ttlSeconds });
            return SendAsync<PlayerToken>(HttpMethod.Post, "/v1/player-tokens", body, cancellationToken);
        }

        /// <summary><c>GET /v1/members/{id}</c>: the profile (a player token reads only its own).</summary>
        public Task<MemberProfile> GetMemberAsync(
            string memberId, CancellationToken cancellationToken = default(CancellationToken))
        {
            return GetAsync<MemberProfile>("/v1/members/" + Url.Segment(memberId), cancellationToken);
        }

        /// <summary>
        /// <c>GET /v1/members/{id}/standings</c>: the member's place on every board (a player token
        /// reads only its own).
        /// </summary>
        public Task<MemberStandings> GetMemberStandingsAsync(
            string memberId, string period = null, CancellationToken cancellationToken = default(CancellationToken))
        {
            var query = new Query().Add("period", period);
            return GetAsync<MemberStandings>("/v1/members/" + Url.Segment(memberId) + "/standings" + query, cancellationToken);
        }

        /// <summary>
        /// <c>GET /v1/boards/{id}/standings</c>: a page of the ranking (the top by default).
        /// </summary>
        public Task<StandingsPage> GetStandingsAsync(
            string board, StandingsQuery query = null, CancellationToken cancellationToken = default(CancellationToken))
        {
            return GetAsync<StandingsPage>(Standings(board) + Scoped(query), cancellationToken);
        }

        /// <summary>
        /// <c>GET /v1/boards/{id}/standings/{member}</c>: rank, score, percentile; all null for a
        /// member without a score.
        /// </summary>
        public Task<MemberStanding> GetMemberStandingAsync(
            string board, string memberId, Scope scope = null, CancellationToken cancellationToken = default(CancellationToken))
        {
            return GetAsync<MemberStanding>(Standings(board) + "/" + Url.Segment(memberId) + Scoped(scope), cancellationToken);
        }

        /// <summary>
        /// <c>.../standings/{member}/around</c>: the member and up to <paramref name="radius"/> (0-50,
        /// default 5) neighbours each side.
        /// </summary>
        public Task<AroundMember> GetAroundMemberAsync(
            string board, string memberId, int? radius = null, Scope scope = null,
            CancellationToken cancellationToken = default(CancellationToken))
        {
            var query = Scoped(scope).Add("radius", radius);
            var path = Standings(board) + "/" + Url.Segment(memberId) + "/around" + query;
            return GetAsync<AroundMember>(path, cancellationToken);
        }

        /// <summary>
        /// <c>.../standings/{member}/following</c>: the ranking among the member and those they follow
        /// (the first <paramref name="limit"/>, default 50).
        /// </summary>
        public Task<FollowingStandings> GetFollowingStandingsAsync(
            string board, string memberId, int? limit = null, Scope scope = null,
            CancellationToken cancellationToken = default(CancellationToken))
        {
            var query = Scoped(scope).Add("limit", limit);
            var path = Standings(board) + "/" + Url.Segment(memberId) + "/following" + query;
            return GetAsync<FollowingStandings>(path, cancellationToken);
        }

        /// <summary>
        /// <c>.../standings/{member}/goals</c>: the entry above, followed members above, award tiers
        /// and the league's promotion, with the score each needs.
        /// </summary>
        public Task<MemberGoals> GetMemberGoalsAsync(
            string board, string memberId, Scope scope = null, CancellationToken cancellationToken = default(CancellationToken))
        {
            var path = Standings(board) + "/" + Url.Segment(memberId) + "/goals" + Scoped(scope);
            return GetAsync<MemberGoals>(path, cancellationToken);
        }

        // A decimal keeps its scale (12.500000m prints so); Laurel takes at most 4 decimals, so
        // the value is sent without the zeros that say nothing. A finer percent is still refused.
        private static decimal WithoutTrailingZeros(decimal value)
        {
            return value / 1.000000000000000000000000000000000m;
        }

        /// <summary>
        /// <c>GET /v1/boards/{id}/cutoffs</c>: the score at positions (<paramref name="ranks"/>, ≥ 1)
        /// and at top percents (<paramref name="percents"/>, in (0, 100]); 1-20 of each, at least one list.
        /// </summary>
        public Task<Cutoffs> GetCutoffsAsync(
            string board, IEnumerable<int> ranks, IEnumerable<decimal> percents = null, Scope scope = null,
            CancellationToken cancellationToken = default(CancellationToken))
        {
            var query = Scoped(scope)
                .AddList("ranks", ranks, r => r.ToString(CultureInfo.InvariantCulture))
                .AddList("percents", percents, p => WithoutTrailingZeros(p).ToString(CultureInfo.InvariantCulture));
            return GetAsync<Cutoffs>("/v1/boards/" + Url.Segment(board) + "/cutoffs" + query, cancellationToken);
        }

        public void Dispose()
        {
            transport.Dispose();
        }

        /// <summary>Posts one batch, serialized once: every attempt sends the very same bytes.</summary>
        private async Task<Answer> PostEventBatchAsync(
            string pathAndQuery, IEnumerable<ScoreEvent> events, CancellationToken cancellationToken)
        {
            if (events == null) throw new ArgumentNullException("events");
            var batch = events.ToList();
            for (var i = 0; i < batch.Count; i++)
            {
                if (batch[i] == null) throw new ArgumentException("events[" + i + "] is null", "events");
                batch[i].Check(i);
            }
            var body = Json.Write(new EventBatch { Events = batch });
            var options = transport.Options;
            var delay = options.RetryDelay;
            for (var attempt = 1; ; attempt++)
            {
                LaurelException failure;
                try
                {
                    var answer = await transport.SendAsync(HttpMethod.Post, pathAndQuery, body, cancellationToken)
                        .ConfigureAwait(false);
                    if (answer.IsSuccess) return answer;
                    failure = Transport.ErrorOf(answer);
                }
                catch (LaurelException err)
                {
                    failure = err;
                }
                if (attempt >= options.EventAttempts || !Retryable(failure)) throw failure;
                var hinted = failure.RetryAfter ?? TimeSpan.Zero;
                await Task.Delay(hinted > delay ? hinted : delay, cancellationToken).ConfigureAwait(false);
                delay = TimeSpan.FromTicks(delay.Ticks * 2);
            }
        }

        /// <summary>
        /// Worth another attempt of the same batch: nothing was accepted, or the answer was lost.
        /// </summary>
        private static bool Retryable(LaurelException err)
        {
            if (err.Status == 503) return err.Error != "not_configured";
            return err.Status == 429
                || err.Error == LaurelException.TimeoutError
                || err.Error == LaurelException.NetworkError;
        }

        private async Task<T> GetAsync<T>(string pathAndQuery, CancellationToken cancellationToken) where T : class
        {
            var answer = await transport.SendAsync(HttpMethod.Get, pathAndQuery, null, cancellationToken).ConfigureAwait(false);
            return Transport.Read<T>(answer);
        }

        private async Task<T> SendAsync<T>(HttpMethod method, string path, byte[] body, CancellationToken cancellationToken)
            where T : class
        {
            var answer = await transport.SendAsync(method, path, body, cancellationToken).ConfigureAwait(false);
            return Transport.Read<T>(answer);
        }

        private static string Standings(string board)
        {
            return "/v1/boards/" + Url.Segment(board) + "/standings";
        }

        private static Query Scoped(Scope scope)
        {
            var query = new Query();
            if (scope != null) scope.AddTo(query);
            return query;
        }
    }
}
