using System;
using System.Collections;
using System.Collections.Generic;
using System.Globalization;
using System.Linq;
using System.Reflection;
using System.Text;
using System.Threading.Tasks;

namespace Laurel.Client.Tests
{
    /// <summary>
    /// What the program saw, step by step, as JSON. Objects are written from their public
    /// properties by reflection (C# names), not with the client's serializer, so the report
    /// shows the client's typed surface: a field it failed to read shows as null or missing.
    /// </summary>
    public sealed class Report
    {
        private readonly List<KeyValuePair<string, object>> steps = new List<KeyValuePair<string, object>>();

        /// <summary>Records a step (steps may run concurrently).</summary>
        public void Add(string step, object value)
        {
            lock (steps) steps.Add(new KeyValuePair<string, object>(step, value));
        }

        /// <summary>Runs one step: its value, or what it threw.</summary>
        public async Task<T> Step<T>(string step, Func<Task<T>> action) where T : class
        {
            try
            {
                var value = await action();
                Add(step, value);
                return value;
            }
            catch (Exception err)
            {
                Add(step, Thrown(err));
                return null;
            }
        }

        /// <summary>
        /// An exception as the test checks it: its type and, for a LaurelException, its fields.
        /// </summary>
        public static object Thrown(Exception err)
        {
            var fields = new Dictionary<string, object>
            {
                { "Thrown", err.GetType().FullName },
                { "IsOperationCanceled", err is OperationCanceledException },
                { "Message", err.Message },
            };
            var laurel = err as LaurelException;
            if (laurel != null)
            {
                fields["Status"] = laurel.Status;
                fields["Error"] = laurel.Error;
                fields["Details"] = laurel.Details;
                fields["RetryAfterSeconds"] = laurel.RetryAfter.HasValue ? (object)laurel.RetryAfter.Value.TotalSeconds : null;
                fields["IsTransportError"] = laurel.IsTransportError;
                fields["Inner"] = laurel.InnerException == null ? null : laurel.InnerException.GetType().FullName;
            }
            return fields;
        }

        public string ToJson()
        {
            var text = new StringBuilder("{");
            for (var i = 0; i < steps.Count; i++)
            {
                if (i > 0) text.Append(',');
                text.Append('\n').Append(Quote(steps[i].Key)).Append(':');
                Write(text, steps[i].Value);
            }
            return text.Append("\n}\n").ToString();
        }

        private static void Write(StringBuilder text, object value)
        {
            if (value == null) text.Append("null");
            else if (value is string) text.Append(Quote((string)value));
            else if (value is bool) text.Append((bool)value ? "true" : "false");
            else if (value is int || value is long) text.Append(Convert.ToString(value, CultureInfo.InvariantCulture));
            else if (value is decimal) text.Append(((decimal)value).ToString(CultureInfo.InvariantCulture));
            else if (value is double) text.Append(((double)value).ToString("R", CultureInfo.InvariantCulture));
            else if (value is DateTimeOffset)
                text.Append(Quote(((DateTimeOffset)value).UtcDateTime.ToString("yyyy-MM-dd'T'HH:mm:ss.fff'Z'", CultureInfo.InvariantCulture)));
            else if (value is IDictionary) WriteDictionary(text, (IDictionary)value);
            else if (value is IEnumerable) WriteList(text, (IEnumerable)value);
            else WriteObject(text, value);
        }

        private static void WriteDictionary(StringBuilder text, IDictionary map)
        {
            text.Append('{');
            var first = true;
            foreach (DictionaryEntry entry in map)
            {
                if (!first) text.Append(',');
                first = false;
                text.Append(Quote(Convert.ToString(entry.Key, CultureInfo.InvariantCulture))).Append(':');
                Write(text, entry.Value);
            }
            text.Append('}');
        }

        private static void WriteList(StringBuilder text, IEnumerable items)
        {
            text.Append('[');
            var first = true;
            foreach (var item in items)
            {
                if (!first) text.Append(',');
                first = false;
                Write(text, item);
            }
            text.Append(']');
        }

        private static void WriteObject(StringBuilder text, object value)
        {
            text.Append('{');
            var properties = value.GetType().GetProperties(BindingFlags.Public | BindingFlags.Instance)
                .Where(p => p.GetIndexParameters().Length == 0)
                .OrderBy(p => p.Name, StringComparer.Ordinal);
            var first = true;
            foreach (var property in properties)
            {
                if (!first) text.Append(',');
                first = false;
                text.Append(Quote(property.Name)).Append(':');
                Write(text, property.GetValue(value, null));
            }
            text.Append('}');
        }

        private static string Quote(string value)
        {
            var text = new StringBuilder("\"");
            foreach (var c in value)
            {
                if (c == '"' || c == '\\') text.Append('\\').Append(c);
                else if (c < ' ') text.Append("\\u").Append(((int)c).ToString("x4", CultureInfo.InvariantCulture));
                else text.Append(c);
            }
            return text.Append('"').ToString();
        }
    }
}
