using System;
using System.Globalization;
using System.IO;
using System.Linq;
using System.Net;
using System.Net.Http;
using System.Net.Http.Headers;
using System.Text;
using System.Threading;
using System.Threading.Tasks;

namespace Laurel.Client
{
    /// <summary>An HTTP answer read whole: its status, body and <c>Retry-After</c>.</summary>
    internal sealed class Answer
    {
        public Answer(int status, byte[] body, TimeSpan? retryAfter)
        {
            Status = status;
            Body = body;
            RetryAfter = retryAfter;
        }

        public int Status { get; private set; }
        public byte[] Body { get; private set; }
        public TimeSpan? RetryAfter { get; private set; }

        public bool IsSuccess
        {
            get { return Status >= 200 && Status < 300; }
        }
    }

    /// <summary>
    /// Sends one request: credentials, the client's timeout, and every failure turned into a
    /// <see cref="LaurelException"/> (a cancellation by the caller stays an OperationCanceledException).
    /// </summary>
    internal sealed class Transport : IDisposable
    {
        private static readonly MediaTypeHeaderValue JsonType = new MediaTypeHeaderValue("application/json");

        private readonly HttpClient http;
        private readonly bool ownsHttp;
        private readonly string baseUrl;
        private readonly LaurelClientOptions options;

        public Transport(LaurelClientOptions options)
        {
            if (options == null) throw new ArgumentNullException("options");
            if (string.IsNullOrEmpty(options.BaseUrl)) throw new ArgumentException("BaseUrl is required", "options");
            var credentials = new object[] { options.ApiKey, options.PlayerToken, options.PlayerTokenProvider };
            if (credentials.Count(c => c != null) > 1)
                throw new ArgumentException("give an ApiKey, a PlayerToken or a PlayerTokenProvider, not two", "options");
            if (options.EventAttempts < 1) throw new ArgumentException("EventAttempts must be at least 1", "options");
            this.options = options;
            baseUrl = options.BaseUrl.TrimEnd('/');
            if (options.HttpClient != null)
            {
                http = options.HttpClient;
            }
            else
            {
                var handler = new HttpClientHandler();
                // Laurel compresses answers over 4 KB for clients that accept it.
                if (handler.SupportsAutomaticDecompression)
                    handler.AutomaticDecompression = DecompressionMethods.GZip | DecompressionMethods.Deflate;
                // The client's own timeout applies per request (see SendAsync).
                http = new HttpClient(handler) { Timeout = System.Threading.Timeout.InfiniteTimeSpan };
                ownsHttp = true;
            }
        }

        public LaurelClientOptions Options
        {
            get { return options; }
        }

        /// <summary>Sends the request and reads the whole answer, whatever its status.</summary>
        public async Task<Answer> SendAsync(HttpMethod method, string pathAndQuery, byte[] body, CancellationToken cancellationToken)
        {
            var url = baseUrl + pathAndQuery;
            var credential = await CredentialAsync(cancellationToken).ConfigureAwait(false);
            using (var limit = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken))
            using (var request = new HttpRequestMessage(method, url))
            {
                if (options.Timeout != System.Threading.Timeout.InfiniteTimeSpan) limit.CancelAfter(options.Timeout);
                if (credential != null) request.Headers.Authorization = new AuthenticationHeaderValue("Bearer", credential);
                request.Headers.Accept.Add(new MediaTypeWithQualityHeaderValue("application/json"));
                if (body != null)
                {
                    request.Content = new ByteArrayContent(body);
                    request.Content.Headers.ContentType = JsonType;
                }
                try
                {
                    using (var response = await http.SendAsync(request, HttpCompletionOption.ResponseContentRead, limit.Token)
                        .ConfigureAwait(false))
                    {
                        var bytes = await response.Content.ReadAsByteArrayAsync().ConfigureAwait(false);
                        return new Answer((int)response.StatusCode, bytes, RetryAfterOf(response));
                    }
                }
                catch (OperationCanceledException err)
                {
                    if (cancellationToken.IsCancellationRequested) throw;
                    // Our timeout, or the timeout of an HttpClient the caller gave.
                    throw new LaurelException(0, LaurelException.TimeoutError,
                        method + " " + url + ": no answer within " + Seconds(options.Timeout), null, null, err);
                }
                catch (HttpRequestException err)
                {
                    throw NetworkError(method, url, err);
                }
                catch (IOException err)
                {
                    throw NetworkError(method, url, err);
                }
                catch (WebException err)
                {
                    throw NetworkError(method, url, err);
                }
            }
        }

        /// <summary>The answer's body as T, or the LaurelException a failed answer stands for.</summary>
        public static T Read<T>(Answer answer) where T : class
        {
            if (!answer.IsSuccess) throw ErrorOf(answer);
            var value = Json.TryRead<T>(answer.Body);
            if (value == null)
                throw new LaurelException(answer.Status, LaurelException.InvalidAnswerError,
                    "the answer is not the JSON this route gives: " + Excerpt(answer.Body), null, answer.RetryAfter);
            return value;
        }

        /// <summary>The LaurelException of an answer that is not a success.</summary>
        public static LaurelException ErrorOf(Answer answer)
        {
            var body = Json.TryRead<ErrorBody>(answer.Body);
            if (body != null && body.Error != null && body.Message != null)
            {
                var details = body.Details == null ? null : body.Details.AsReadOnly();
                return new LaurelException(answer.Status, body.Error, body.Message, details, answer.RetryAfter);
            }
            var text = Excerpt(answer.Body);
            return new LaurelException(answer.Status, LaurelException.HttpError,
                "HTTP " + answer.Status + (text.Length > 0 ? ": " + text : string.Empty), null, answer.RetryAfter);
        }

        private async Task<string> CredentialAsync(CancellationToken cancellationToken)
        {
            if (options.PlayerTokenProvider == null) return options.ApiKey ?? options.PlayerToken;
            return await options.PlayerTokenProvider(cancellationToken).ConfigureAwait(false);
        }

        private static LaurelException NetworkError(HttpMethod method, string url, Exception err)
        {
            // The socket's own words are on the innermost exception ("Connection refused").
            var why = err.Message;
            var inner = err.InnerException;
            while (inner != null)
            {
                if (!why.EndsWith(inner.Message, StringComparison.Ordinal)) why += ": " + inner.Message;
                inner = inner.InnerException;
            }
            return new LaurelException(0, LaurelException.NetworkError, method + " " + url + ": " + why, null, null, err);
        }

        private static TimeSpan? RetryAfterOf(HttpResponseMessage response)
        {
            var header = response.Headers.RetryAfter;
            if (header == null) return null;
            TimeSpan wait;
            if (header.Delta.HasValue) wait = header.Delta.Value;
            else if (header.Date.HasValue) wait = header.Date.Value - DateTimeOffset.UtcNow;
            else return null;
            return wait < TimeSpan.Zero ? TimeSpan.Zero : wait;
        }

        private static string Excerpt(byte[] body)
        {
            if (body == null || body.Length == 0) return string.Empty;
            var text = Encoding.UTF8.GetString(body, 0, Math.Min(body.Length, 200)).Trim();
            return body.Length > 200 ? text + "..." : text;
        }

        private static string Seconds(TimeSpan span)
        {
            return span.TotalSeconds.ToString("0.###", CultureInfo.InvariantCulture) + " s";
        }

        public void Dispose()
        {
            if (ownsHttp) http.Dispose();
        }
    }
}
