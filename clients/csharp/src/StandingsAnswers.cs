using System;
using System.Collections.Generic;
using System.Runtime.Serialization;

namespace Laurel.Client
{
    /// <summary>
    /// One period of a board: its key, bounds and state (<c>open</c>, <c>closing</c>, <c>closed</c>).
    /// </summary>
    [DataContract]
    public sealed class PeriodInfo
    {
        [DataMember(Name = "startsAt")]
        private string startsAt;

        [DataMember(Name = "endsAt")]
        private string endsAt;

        [DataMember(Name = "key")]
        public string Key { get; private set; }

        [DataMember(Name = "state")]
        public string State { get; private set; }

        public DateTimeOffset StartsAt
        {
            get { return Iso.Parse(startsAt); }
        }

        /// <summary>Null for an <c>all</c> period without an end.</summary>
        public DateTimeOffset? EndsAt
        {
            get { return Iso.ParseOrNull(endsAt); }
        }
    }

    /// <summary>
    /// What every standings answer starts with: the board, period and scope, and how many are ranked in
    /// it.
    /// </summary>
    [DataContract]
    public abstract class ScopedAnswer
    {
        [DataMember(Name = "board")]
        public string Board { get; private set; }

        [DataMember(Name = "period")]
        public PeriodInfo Period { get; private set; }

        [DataMember(Name = "category")]
        public string Category { get; private set; }

        [DataMember(Name = "region")]
        public string Region { get; private set; }

        /// <summary>Ranked members in the scope.</summary>
        [DataMember(Name = "total")]
        public int Total { get; private set; }

        /// <summary><c>cache</c> or <c>database</c> (same ranks either way).</summary>
        [DataMember(Name = "source")]
        public string Source { get; private set; }
    }

    [DataContract]
    public sealed class StandingEntry
    {
        [DataMember(Name = "rank")]
        public int Rank { get; private set; }

        [DataMember(Name = "member")]
        public string Member { get; private set; }

        /// <summary>Null when the member has none.</summary>
        [DataMember(Name = "displayName")]
        public string DisplayName { get; private set; }

        [DataMember(Name = "score")]
        public decimal Score { get; private set; }

        /// <summary>On a board with a subscore only.</summary>
        [DataMember(Name = "subscore")]
        public decimal? Subscore { get; private set; }
    }

    /// <summary>A member's place in a scope; every number null when the member has no score.</summary>
    [DataContract]
    public sealed class Placement
    {
        [DataMember(Name = "member")]
        public string Member { get; private set; }

        [DataMember(Name = "rank")]
        public int? Rank { get; private set; }

        [DataMember(Name = "score")]
        public decimal? Score { get; private set; }

        /// <summary>rank / total.</summary>
        [DataMember(Name = "percentile")]
        public double? Percentile { get; private set; }

        /// <summary>The N of "Top N%": max(1, round(percentile × 100)).</summary>
        [DataMember(Name = "topPercent")]
        public int? TopPercent { get; private set; }
    }

    /// <summary><c>GET /v1/boards/{id}/standings</c>: a page of the ranking.</summary>
    [DataContract]
    public sealed class StandingsPage : ScopedAnswer
    {
        [DataMember(Name = "limit")]
        public int Limit { get; private set; }

        [DataMember(Name = "offset")]
        public int Offset { get; private set; }

        [DataMember(Name = "entries")]
        public List<StandingEntry> Entries { get; private set; }

        /// <summary>
        /// With <see cref="StandingsQuery.Member"/>: that member's placement; otherwise null.
        /// </summary>
        [DataMember(Name = "me")]
        public Placement Me { get; private set; }
    }

    /// <summary>
    /// <c>GET /v1/boards/{id}/standings/{member}</c>: a member's place; <c>Rank</c> null without a
    /// score.
    /// </summary>
    [DataContract]
    public sealed class MemberStanding : ScopedAnswer
    {
        [DataMember(Name = "member")]
        public string Member { get; private set; }

        [DataMember(Name = "rank")]
        public int? Rank { get; private set; }

        [DataMember(Name = "score")]
        public decimal? Score { get; private set; }

        [DataMember(Name = "percentile")]
        public double? Percentile { get; private set; }

        [DataMember(Name = "topPercent")]
        public int? TopPercent { get; private set; }
    }

    /// <summary>
    /// <c>.../standings/{member}/around</c>: the member and up to <c>Radius</c> neighbours each side.
    /// </summary>
    [DataContract]
    public sealed class AroundMember : ScopedAnswer
    {
        [DataMember(Name = "member")]
        public string Member { get; private set; }

        /// <summary>Null (and no entries) without a score.</summary>
        [DataMember(Name = "rank")]
        public int? Rank { get; private set; }

        [DataMember(Name = "radius")]
        public int Radius { get; private set; }

        [DataMember(Name = "entries")]
        public List<StandingEntry> Entries { get; private set; }
    }

    /// <summary>
    /// <c>.../standings/{member}/following</c>: the ranking among the member and those they follow.
    /// <c>Total</c> counts the ranked members of that group; <c>Following</c> how many the member follows.
    /// </summary>
    [DataContract]
    public sealed class FollowingStandings : ScopedAnswer
    {
        [DataMember(Name = "member")]
        public string Member { get; private set; }

        /// <summary>The member's rank in the group; null without a score.</summary>
        [DataMember(Name = "rank")]
        public int? Rank { get; private set; }

        [DataMember(Name = "following")]
        public int Following { get; private set; }

        [DataMember(Name = "entries")]
        public List<StandingEntry> Entries { get; private set; }
    }
}
