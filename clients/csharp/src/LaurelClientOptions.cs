using System;
using System.Net.Http;
using System.Threading;
using System.Threading.Tasks;

namespace Laurel.Client
{
    /// <summary>How a <see cref="LaurelClient"/> reaches Laurel and whom it speaks for.</summary>
    public sealed class LaurelClientOptions
    {
        public LaurelClientOptions()
        {
            EventAttempts = 5;
            RetryDelay = TimeSpan.FromMilliseconds(200);
            Timeout = TimeSpan.FromSeconds(10);
        }

        /// <summary>
        /// Where Laurel answers, e.g. <c>https://laurel.internal</c> (a path prefix is kept).
        /// </summary>
        public string BaseUrl { get; set; }

        /// <summary>
        /// A Laurel API key, sent as <c>Authorization: Bearer &lt;key&gt;</c>: for game servers and
        /// tools, never for game clients (keys are secrets). Leave unset for public reads.
        /// </summary>
        public string ApiKey { get; set; }

        /// <summary>
        /// A player token instead of a key, sent the same way: for game clients, which read the
        /// boards and only their own member's routes. A game server mints it
        /// (<see cref="LaurelClient.CreatePlayerTokenAsync"/>).
        /// </summary>
        public string PlayerToken { get; set; }

        /// <summary>
        /// Asked for the player token before each request, so that a game client can renew it
        /// before it expires. Give this, <see cref="PlayerToken"/> or <see cref="ApiKey"/>, not two.
        /// </summary>
        public Func<CancellationToken, Task<string>> PlayerTokenProvider { get; set; }

        /// <summary>
        /// Attempts of <c>POST /v1/events</c> on 503, 429, timeouts and network errors (default 5).
        /// </summary>
        public int EventAttempts { get; set; }

        /// <summary>
        /// First pause between event attempts, doubled each time; a longer <c>Retry-After</c> wins
        /// (default 200 ms).
        /// </summary>
        public TimeSpan RetryDelay { get; set; }

        /// <summary>
        /// Time one request may take before it is abandoned (and, for events, retried); default 10 s.
        /// </summary>
        public TimeSpan Timeout { get; set; }

        /// <summary>
        /// An HttpClient to send with (for instance one shared by the process); the client never
        /// disposes it. By default the client makes its own, disposed with it.
        /// </summary>
        public HttpClient HttpClient { get; set; }
    }
}
