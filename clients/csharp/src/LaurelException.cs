using System;
using System.Collections.Generic;
using System.Runtime.Serialization;

namespace Laurel.Client
{
    /// <summary>
    /// Any failed request: an answer of Laurel that is not a success (the API's error body with
    /// its HTTP status), or a request that got no answer at all (<see cref="Status"/> 0 and
    /// <see cref="Error"/> <c>network_error</c> or <c>timeout</c>, the underlying exception as
    /// <see cref="Exception.InnerException"/>). A request cancelled through the caller's
    /// <c>CancellationToken</c> throws <see cref="OperationCanceledException"/> instead.
    /// </summary>
    public sealed class LaurelException : Exception
    {
        /// <summary>The connection failed: refused, reset, or the host name did not resolve.</summary>
        public const string NetworkError = "network_error";

        /// <summary>No answer within <see cref="LaurelClientOptions.Timeout"/>.</summary>
        public const string TimeoutError = "timeout";

        /// <summary>
        /// A <c>?wait=true</c> batch not applied within Laurel's wait: it stays queued (status 202).
        /// </summary>
        public const string PendingError = "pending";

        /// <summary>A success whose body is not the JSON the route answers.</summary>
        public const string InvalidAnswerError = "invalid_answer";

        /// <summary>
        /// An answer that is not a success and has no Laurel error body (a proxy's page, say).
        /// </summary>
        public const string HttpError = "http_error";

        private static readonly IReadOnlyList<ErrorDetail> NoDetails = new ErrorDetail[0];

        public LaurelException(
            int status,
            string error,
            string message,
            IReadOnlyList<ErrorDetail> details = null,
            TimeSpan? retryAfter = null,
            Exception innerException = null)
            : base(message, innerException)
        {
            Status = status;
            Error = error;
            Details = details ?? NoDetails;
            RetryAfter = retryAfter;
        }

        /// <summary>The HTTP status; 0 when no answer came.</summary>
        public int Status { get; private set; }

        /// <summary>
        /// The error code: the API's (<c>not_found</c>, <c>validation_failed</c>, <c>forbidden</c>,
        /// ...) or one of this class's constants.
        /// </summary>
        public string Error { get; private set; }

        /// <summary>
        /// The fields at fault (on a 400): each with its <c>path</c>, and the <c>index</c> of the event
        /// or member in a batch. Empty when the answer named none.
        /// </summary>
        public IReadOnlyList<ErrorDetail> Details { get; private set; }

        /// <summary>
        /// How long the server asked to wait before retrying (<c>Retry-After</c>), when it said.
        /// </summary>
        public TimeSpan? RetryAfter { get; private set; }

        /// <summary>True when the request got no HTTP answer (<see cref="Status"/> 0).</summary>
        public bool IsTransportError
        {
            get { return Status == 0; }
        }

        public override string ToString()
        {
            var head = Status == 0 ? Error : Status + " " + Error;
            return GetType().FullName + ": " + head + ": " + Message
                + (InnerException == null ? string.Empty : " ---> " + InnerException)
                + Environment.NewLine + StackTrace;
        }
    }

    /// <summary>One problem of a <c>400</c>: the field's path and, in a batch, the entry's index.</summary>
    [DataContract]
    public sealed class ErrorDetail
    {
        [DataMember(Name = "index")]
        public int? Index { get; private set; }

        [DataMember(Name = "path")]
        public string Path { get; private set; }

        [DataMember(Name = "message")]
        public string Message { get; private set; }
    }

    /// <summary>The body of every 4xx and 5xx answer.</summary>
    [DataContract]
    internal sealed class ErrorBody
    {
        [DataMember(Name = "error")]
        public string Error { get; private set; }

        [DataMember(Name = "message")]
        public string Message { get; private set; }

        [DataMember(Name = "details")]
        public List<ErrorDetail> Details { get; private set; }
    }
}
