using System.Collections.Generic;
using System.Runtime.Serialization;

namespace Laurel.Client.Tests
{
    /// <summary>
    /// What the test asks this program to do, written by test/integration/csharp-client.test.ts.
    /// </summary>
    [DataContract]
    public sealed class Plan
    {
        [DataMember(Name = "baseUrl")] public string BaseUrl;
        [DataMember(Name = "ingestKey")] public string IngestKey;
        [DataMember(Name = "readKey")] public string ReadKey;
        [DataMember(Name = "board")] public string Board;
        [DataMember(Name = "profiles")] public List<PlanProfile> Profiles;
        [DataMember(Name = "follower")] public string Follower;
        [DataMember(Name = "followed")] public List<string> Followed;
        [DataMember(Name = "waitBatches")] public List<List<PlanEvent>> WaitBatches;
        [DataMember(Name = "queuedBatch")] public List<PlanEvent> QueuedBatch;
        [DataMember(Name = "invalidBatch")] public List<PlanEvent> InvalidBatch;
        [DataMember(Name = "standingOf")] public List<string> StandingOf;
        [DataMember(Name = "pages")] public List<PlanPage> Pages;
        [DataMember(Name = "around")] public List<PlanAround> Around;
        [DataMember(Name = "goalsOf")] public List<string> GoalsOf;
        [DataMember(Name = "cutoffRanks")] public List<int> CutoffRanks;
        [DataMember(Name = "cutoffPercents")] public List<decimal> CutoffPercents;
        [DataMember(Name = "tokenMember")] public string TokenMember;
        [DataMember(Name = "otherMember")] public string OtherMember;
        [DataMember(Name = "limited")] public PlanTarget Limited;
        [DataMember(Name = "flaky")] public PlanTarget Flaky;
        [DataMember(Name = "down")] public PlanTarget Down;
        [DataMember(Name = "idle")] public PlanTarget Idle;
        [DataMember(Name = "silentUrl")] public string SilentUrl;
        [DataMember(Name = "closedUrl")] public string ClosedUrl;
    }

    [DataContract]
    public sealed class PlanEvent
    {
        [DataMember(Name = "board")] public string Board;
        [DataMember(Name = "member")] public string Member;
        [DataMember(Name = "value")] public decimal Value;
        [DataMember(Name = "idempotencyKey")] public string IdempotencyKey;
        [DataMember(Name = "occurredAt")] public string OccurredAt;
        [DataMember(Name = "category")] public string Category;
        [DataMember(Name = "withMetadata")] public bool WithMetadata;
    }

    [DataContract]
    public sealed class PlanProfile
    {
        [DataMember(Name = "member")] public string Member;
        [DataMember(Name = "displayName")] public string DisplayName;
        [DataMember(Name = "region")] public string Region;
    }

    [DataContract]
    public sealed class PlanPage
    {
        [DataMember(Name = "limit")] public int? Limit;
        [DataMember(Name = "offset")] public int? Offset;
        [DataMember(Name = "member")] public string Member;
        [DataMember(Name = "members")] public List<string> Members;
        [DataMember(Name = "category")] public string Category;
        [DataMember(Name = "region")] public string Region;
    }

    [DataContract]
    public sealed class PlanAround
    {
        [DataMember(Name = "member")] public string Member;
        [DataMember(Name = "radius")] public int Radius;
    }

    /// <summary>
    /// Another Laurel (or a proxy in front of one) and the events to post there, one batch each.
    /// </summary>
    [DataContract]
    public sealed class PlanTarget
    {
        [DataMember(Name = "baseUrl")] public string BaseUrl;
        [DataMember(Name = "ingestKey")] public string IngestKey;
        [DataMember(Name = "events")] public List<PlanEvent> Events;
    }
}
