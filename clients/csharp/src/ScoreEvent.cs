using System;
using System.Collections.Generic;
using System.Globalization;
using System.Runtime.Serialization;

namespace Laurel.Client
{
    /// <summary>
    /// One score event for <c>POST /v1/events</c>. An event is <c>(Board, IdempotencyKey)</c>:
    /// posting it again (a retry, a lost answer) counts it once, so derive the key from what
    /// happened (match id and player), never from the time of sending.
    /// </summary>
    [DataContract]
    public sealed class ScoreEvent
    {
        public ScoreEvent()
        {
        }

        public ScoreEvent(string board, string member, decimal value, string idempotencyKey)
        {
            Board = board;
            Member = member;
            Value = value;
            IdempotencyKey = idempotencyKey;
        }

        [DataMember(Name = "board", Order = 0)]
        public string Board { get; set; }

        [DataMember(Name = "member", Order = 1)]
        public string Member { get; set; }

        /// <summary>The value as the game has it, with at most the board's <c>decimals</c>.</summary>
        [DataMember(Name = "value", Order = 2)]
        public decimal Value { get; set; }

        /// <summary>1-128 printable ASCII characters without spaces, unique per board.</summary>
        [DataMember(Name = "idempotencyKey", Order = 3)]
        public string IdempotencyKey { get; set; }

        /// <summary>
        /// When it happened (default: when Laurel receives it); decides the period it counts in.
        /// </summary>
        public DateTimeOffset? OccurredAt { get; set; }

        /// <summary>One of the board's categories, or null.</summary>
        [DataMember(Name = "category", Order = 5, EmitDefaultValue = false)]
        public string Category { get; set; }

        /// <summary>On a board with a subscore: the second number ordering equal scores.</summary>
        [DataMember(Name = "subscore", Order = 6, EmitDefaultValue = false)]
        public decimal? Subscore { get; set; }

        /// <summary>Where the event comes from (a server name), kept with it.</summary>
        [DataMember(Name = "source", Order = 7, EmitDefaultValue = false)]
        public string Source { get; set; }

        /// <summary>
        /// Kept with the event (Laurel's standings give it back with <c>metadata=true</c>, which this
        /// client does not read yet): at most
        /// 2 KB, values strings, numbers, booleans or null (nested objects are not supported here).
        /// </summary>
        [DataMember(Name = "metadata", Order = 8, EmitDefaultValue = false)]
        public Dictionary<string, object> Metadata { get; set; }

        [DataMember(Name = "occurredAt", Order = 4, EmitDefaultValue = false)]
        private string OccurredAtText
        {
            get
            {
                return OccurredAt.HasValue
                    ? OccurredAt.Value.UtcDateTime.ToString("yyyy-MM-dd'T'HH:mm:ss.fff'Z'", CultureInfo.InvariantCulture)
                    : null;
            }
            set
            {
                OccurredAt = value == null ? (DateTimeOffset?)null : Iso.Parse(value);
            }
        }

        internal void Check(int index)
        {
            if (Metadata == null) return;
            foreach (var entry in Metadata)
            {
                var v = entry.Value;
                if (v == null || v is string || v is bool || v is int || v is long || v is double || v is float
                    || v is decimal || v is short || v is byte || v is uint || v is ulong)
                    continue;
                throw new ArgumentException(string.Format(CultureInfo.InvariantCulture,
                    "events[{0}].metadata.{1}: a {2}; values must be strings, numbers, booleans or null",
                    index, entry.Key, v.GetType().Name));
            }
        }
    }

    [DataContract]
    internal sealed class EventBatch
    {
        [DataMember(Name = "events")]
        public List<ScoreEvent> Events { get; set; }
    }

    [DataContract]
    internal sealed class MemberUpdate
    {
        [DataMember(Name = "displayName", EmitDefaultValue = false)]
        public string DisplayName { get; set; }

        [DataMember(Name = "region", EmitDefaultValue = false)]
        public string Region { get; set; }
    }

    [DataContract]
    internal sealed class FollowingUpdate
    {
        [DataMember(Name = "memberIds")]
        public List<string> MemberIds { get; set; }
    }

    [DataContract]
    internal sealed class PlayerTokenRequest
    {
        [DataMember(Name = "member")]
        public string Member { get; set; }

        [DataMember(Name = "ttlSeconds", EmitDefaultValue = false)]
        public int? TtlSeconds { get; set; }
    }

    /// <summary>ISO 8601 instants as Laurel writes them.</summary>
    internal static class Iso
    {
        public static DateTimeOffset Parse(string text)
        {
            return DateTimeOffset.Parse(text, CultureInfo.InvariantCulture,
                DateTimeStyles.AssumeUniversal | DateTimeStyles.AdjustToUniversal);
        }

        public static DateTimeOffset? ParseOrNull(string text)
        {
            return text == null ? (DateTimeOffset?)null : Parse(text);
        }
    }
}
