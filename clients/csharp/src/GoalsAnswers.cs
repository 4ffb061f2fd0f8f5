using System.Collections.Generic;
using System.Runtime.Serialization;

namespace Laurel.Client
{
    /// <summary>
    /// <c>.../standings/{member}/goals</c>: what it takes to move up. A member without a score
    /// has <c>Rank</c> and <c>Score</c> null, and every goal's <c>Gap</c> null.
    /// </summary>
    [DataContract]
    public sealed class MemberGoals
    {
        [DataMember(Name = "board")]
        public string Board { get; private set; }

        [DataMember(Name = "period")]
        public PeriodInfo Period { get; private set; }

        [DataMember(Name = "category")]
        public string Category { get; private set; }

        [DataMember(Name = "region")]
        public string Region { get; private set; }

        [DataMember(Name = "source")]
        public string Source { get; private set; }

        [DataMember(Name = "member")]
        public string Member { get; private set; }

        [DataMember(Name = "rank")]
        public int? Rank { get; private set; }

        [DataMember(Name = "score")]
        public decimal? Score { get; private set; }

        /// <summary>The entry just above; null at the top or without a score.</summary>
        [DataMember(Name = "next")]
        public Goal Next { get; private set; }

        /// <summary>
        /// Followed members ranked above, nearest first (without a score: the ranked ones, lowest
        /// first); at most 10.
        /// </summary>
        [DataMember(Name = "following")]
        public List<Goal> Following { get; private set; }

        /// <summary>
        /// One per award tier of the scope not reached yet (<see cref="Goal.Award"/> set, <c>Rank</c>
        /// the tier).
        /// </summary>
        [DataMember(Name = "awards")]
        public List<Goal> Awards { get; private set; }

        /// <summary>
        /// On a league board: the lowest promoting place of the member's bucket when not in it
        /// (<see cref="Goal.Zone"/> <c>promote</c>); else null.
        /// </summary>
        [DataMember(Name = "league")]
        public Goal League { get; private set; }
    }

    /// <summary>
    /// A target: its place and score, the score that would pass it if reached now, and how far that is.
    /// </summary>
    [DataContract]
    public sealed class Goal
    {
        /// <summary>The member to pass (next and following goals).</summary>
        [DataMember(Name = "member")]
        public string Member { get; private set; }

        /// <summary>The award (<c>top10</c>, <c>region_top50</c>) of an award goal.</summary>
        [DataMember(Name = "award")]
        public string Award { get; private set; }

        /// <summary><c>promote</c> for the league goal.</summary>
        [DataMember(Name = "zone")]
        public string Zone { get; private set; }

        [DataMember(Name = "rank")]
        public int Rank { get; private set; }

        [DataMember(Name = "score")]
        public decimal Score { get; private set; }

        /// <summary>
        /// The aggregate score that ranks the member ahead of the target (or level, on shared boards).
        /// </summary>
        [DataMember(Name = "needed")]
        public decimal Needed { get; private set; }

        /// <summary>|Needed − the member's score|; null for a member without a score.</summary>
        [DataMember(Name = "gap")]
        public decimal? Gap { get; private set; }
    }

    /// <summary>
    /// <c>GET /v1/boards/{id}/cutoffs</c>: the score it takes to reach positions of the ranking.
    /// </summary>
    [DataContract]
    public sealed class Cutoffs : ScopedAnswer
    {
        [DataMember(Name = "ranks")]
        public List<RankCutoff> Ranks { get; private set; }

        [DataMember(Name = "percents")]
        public List<PercentCutoff> Percents { get; private set; }
    }

    [DataContract]
    public sealed class RankCutoff
    {
        [DataMember(Name = "rank")]
        public int Rank { get; private set; }

        /// <summary>The score at that position of the listing order; null past the end.</summary>
        [DataMember(Name = "score")]
        public decimal? Score { get; private set; }
    }

    [DataContract]
    public sealed class PercentCutoff
    {
        [DataMember(Name = "percent")]
        public decimal Percent { get; private set; }

        /// <summary>The position max(1, ceil(total × percent / 100)).</summary>
        [DataMember(Name = "rank")]
        public int Rank { get; private set; }

        /// <summary>The score it takes to be in the top Percent; null when nobody is ranked.</summary>
        [DataMember(Name = "score")]
        public decimal? Score { get; private set; }
    }
}
