using System;
using System.Collections.Generic;
using System.Runtime.Serialization;

namespace Laurel.Client
{
    /// <summary>A member's profile.</summary>
    [DataContract]
    public sealed class MemberProfile
    {
        [DataMember(Name = "member")]
        public string Id { get; private set; }

        [DataMember(Name = "displayName")]
        public string DisplayName { get; private set; }

        [DataMember(Name = "region")]
        public string Region { get; private set; }

        /// <summary>Excluded from every standing (moderation); not shown to anonymous readers.</summary>
        [DataMember(Name = "excluded")]
        public bool Excluded { get; private set; }
    }

    /// <summary>The members a member follows, as stored.</summary>
    [DataContract]
    public sealed class FollowingList
    {
        [DataMember(Name = "member")]
        public string Member { get; private set; }

        [DataMember(Name = "memberIds")]
        public List<string> MemberIds { get; private set; }
    }

    /// <summary>
    /// <c>GET /v1/members/{id}/standings</c>: the member's <c>(all, world)</c> place on every board.
    /// </summary>
    [DataContract]
    public sealed class MemberStandings
    {
        [DataMember(Name = "member")]
        public string Member { get; private set; }

        [DataMember(Name = "standings")]
        public List<BoardPlacement> Standings { get; private set; }
    }

    [DataContract]
    public sealed class BoardPlacement
    {
        [DataMember(Name = "board")]
        public string Board { get; private set; }

        [DataMember(Name = "period")]
        public PeriodInfo Period { get; private set; }

        [DataMember(Name = "total")]
        public int Total { get; private set; }

        [DataMember(Name = "source")]
        public string Source { get; private set; }

        [DataMember(Name = "rank")]
        public int? Rank { get; private set; }

        [DataMember(Name = "score")]
        public decimal? Score { get; private set; }

        [DataMember(Name = "percentile")]
        public double? Percentile { get; private set; }

        [DataMember(Name = "topPercent")]
        public int? TopPercent { get; private set; }
    }

    /// <summary>A player token for one member: hand it to that player's game client.</summary>
    [DataContract]
    public sealed class PlayerToken
    {
        [DataMember(Name = "expiresAt")]
        private string expiresAt;

        [DataMember(Name = "token")]
        public string Token { get; private set; }

        [DataMember(Name = "member")]
        public string Member { get; private set; }

        public DateTimeOffset ExpiresAt
        {
            get { return Iso.Parse(expiresAt); }
        }
    }
}
