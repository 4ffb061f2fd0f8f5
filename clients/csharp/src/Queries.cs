using System.Collections.Generic;
using System.Globalization;
using System.Linq;
using System.Text;

namespace Laurel.Client
{
    /// <summary>
    /// Which ranking a read asks: the period (<c>current</c> or a key such as <c>2026-12</c>),
    /// the category (<c>all</c>) and the region (<c>world</c>). Null leaves Laurel's default.
    /// </summary>
    public class Scope
    {
        public string Period { get; set; }
        public string Category { get; set; }
        public string Region { get; set; }

        internal virtual void AddTo(Query query)
        {
            query.Add("period", Period);
            query.Add("category", Category);
            query.Add("region", Region);
        }
    }

    /// <summary>A page of standings: the scope, and which entries.</summary>
    public sealed class StandingsQuery : Scope
    {
        /// <summary>Entries per page, 1-200 (Laurel's default 50).</summary>
        public int? Limit { get; set; }

        public int? Offset { get; set; }

        /// <summary>Adds this member's placement to the page as <see cref="StandingsPage.Me"/>.</summary>
        public string Member { get; set; }

        /// <summary>
        /// Only these members' entries (1-100 ids), at their ranks; Limit and Offset do not apply.
        /// </summary>
        public IList<string> Members { get; set; }

        internal override void AddTo(Query query)
        {
            base.AddTo(query);
            query.Add("limit", Limit);
            query.Add("offset", Offset);
            query.Add("member", Member);
            if (Members != null) query.Add("members", string.Join(",", Members));
        }
    }

    /// <summary>A query string, values escaped, nulls left out.</summary>
    internal sealed class Query
    {
        private readonly StringBuilder text = new StringBuilder();

        public Query Add(string name, string value)
        {
            if (value == null) return this;
            text.Append(text.Length == 0 ? '?' : '&').Append(name).Append('=').Append(Url.Escape(value));
            return this;
        }

        public Query Add(string name, int? value)
        {
            return value.HasValue ? Add(name, value.Value.ToString(CultureInfo.InvariantCulture)) : this;
        }

        public Query AddList<T>(string name, IEnumerable<T> values, System.Func<T, string> format)
        {
            return values == null ? this : Add(name, string.Join(",", values.Select(format)));
        }

        public override string ToString()
        {
            return text.ToString();
        }
    }

    /// <summary>Query values and path segments, escaped.</summary>
    internal static class Url
    {
        public static string Escape(string value)
        {
            return System.Uri.EscapeDataString(value);
        }

        /// <summary>
        /// An id as one path segment. "." and ".." (valid member ids) cannot be: URI parsers
        /// remove such segments, escaped or not, and the request would reach another route.
        /// </summary>
        public static string Segment(string value)
        {
            if (value == null) throw new System.ArgumentNullException("value");
            if (value.Length == 0 || value == "." || value == "..")
                throw new System.ArgumentException("the id \"" + value + "\" cannot be sent as a URL path segment", "value");
            return Escape(value);
        }
    }
}
