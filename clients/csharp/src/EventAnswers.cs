using System;
using System.Collections.Generic;
using System.Runtime.Serialization;

namespace Laurel.Client
{
    /// <summary><c>202</c> of <c>POST /v1/events</c>: the batch is queued (not yet applied).</summary>
    [DataContract]
    public sealed class EventsAccepted
    {
        [DataMember(Name = "accepted")]
        public int Accepted { get; private set; }

        /// <summary>With <c>?wait=true</c> only, when the batch was not applied within the wait.</summary>
        [DataMember(Name = "jobId")]
        internal string JobId { get; private set; }
    }

    /// <summary>
    /// <c>200</c> of <c>POST /v1/events?wait=true</c>: one result per event, in the order posted.
    /// </summary>
    [DataContract]
    public sealed class EventResults
    {
        [DataMember(Name = "results")]
        public List<EventResult> Results { get; private set; }
    }

    /// <summary>
    /// What became of one event, and its member's <c>(all, world)</c> placement before and after the
    /// batch.
    /// </summary>
    [DataContract]
    public sealed class EventResult
    {
        [DataMember(Name = "idempotencyKey")]
        public string IdempotencyKey { get; private set; }

        [DataMember(Name = "board")]
        public string Board { get; private set; }

        /// <summary>
        /// <c>applied</c>, <c>duplicate</c> (seen before on that board) or <c>rejected</c>
        /// (see <see cref="Reason"/>).
        /// </summary>
        [DataMember(Name = "status")]
        public string Status { get; private set; }

        /// <summary>
        /// Why it was rejected: <c>conflict</c>, <c>period_closed</c>, <c>out_of_range</c>,
        /// <c>outside_window</c>, <c>attempts_exhausted</c>, <c>board_full</c>.
        /// </summary>
        [DataMember(Name = "reason")]
        public string Reason { get; private set; }

        /// <summary>The key of the period the event belongs to.</summary>
        [DataMember(Name = "period")]
        public string Period { get; private set; }

        [DataMember(Name = "score")]
        public decimal? Score { get; private set; }

        [DataMember(Name = "rank")]
        public int? Rank { get; private set; }

        [DataMember(Name = "previousScore")]
        public decimal? PreviousScore { get; private set; }

        [DataMember(Name = "previousRank")]
        public int? PreviousRank { get; private set; }
    }

    /// <summary><c>GET /v1/events/{key}</c>: where one event stands.</summary>
    [DataContract]
    public sealed class EventStatus
    {
        [DataMember(Name = "occurredAt")]
        private string occurredAt;

        [DataMember(Name = "receivedAt")]
        private string receivedAt;

        [DataMember(Name = "appliedAt")]
        private string appliedAt;

        [DataMember(Name = "idempotencyKey")]
        public string IdempotencyKey { get; private set; }

        /// <summary><c>pending</c>, <c>applied</c>, <c>voided</c> or <c>rejected</c>.</summary>
        [DataMember(Name = "status")]
        public string Status { get; private set; }

        /// <summary>Why a rejected event was refused.</summary>
        [DataMember(Name = "reason")]
        public string Reason { get; private set; }

        [DataMember(Name = "board")]
        public string Board { get; private set; }

        /// <summary>The period's key; null while pending or when no period took it.</summary>
        [DataMember(Name = "period")]
        public string Period { get; private set; }

        [DataMember(Name = "member")]
        public string Member { get; private set; }

        [DataMember(Name = "category")]
        public string Category { get; private set; }

        /// <summary>The value as posted (stored events only).</summary>
        [DataMember(Name = "value")]
        public decimal? Value { get; private set; }

        /// <summary>The member's current <c>(all, world)</c> score on the board.</summary>
        [DataMember(Name = "score")]
        public decimal? Score { get; private set; }

        [DataMember(Name = "source")]
        public string Source { get; private set; }

        public DateTimeOffset? OccurredAt
        {
            get { return Iso.ParseOrNull(occurredAt); }
        }

        public DateTimeOffset? ReceivedAt
        {
            get { return Iso.ParseOrNull(receivedAt); }
        }

        public DateTimeOffset? AppliedAt
        {
            get { return Iso.ParseOrNull(appliedAt); }
        }
    }
}
