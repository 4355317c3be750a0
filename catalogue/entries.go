package catalogue

// Target-profile keys a check can need (see package target).
const (
	KeyNotifying    Key = "tools.notifying"
	KeyStateful     Key = "tools.stateful"
	KeyGraceTimings Key = "timings.idle_threshold+grace_period+reaper_interval"
	KeyEventMaxAge  Key = "timings.event_max_age"
	KeyPrincipals   Key = "principals"
	KeyOriginDenied Key = "origins.disallowed"
	KeyRecoveryHint Key = "recovery_hint"
	KeyResumable    Key = "tools.resumable"
	KeyTask         Key = "tools.task"
	// KeyRefreshedToken is a second token of the first principal, as a
	// token refresh would give it.
	KeyRefreshedToken Key = "principals[0].refreshed_token"
	// The sessionless revision (2026-07-28).
	KeyStepping  Key = "tools.stepping"
	KeyListen    Key = "listen"
	KeyKeepAlive Key = "timings.keep_alive"
)

const (
	specTransports   = "https://modelcontextprotocol.io/specification/2025-11-25/basic/transports"
	specSessions     = specTransports + "#session-management"
	specVersion      = specTransports + "#protocol-version-header"
	specSecurity     = specTransports + "#security-warning"
	specListening    = specTransports + "#listening-for-messages-from-the-server"
	specMultiple     = specTransports + "#multiple-connections"
	specResumability = specTransports + "#resumability-and-redelivery"
	specSending      = specTransports + "#sending-messages-to-the-server"
	specCancellation = "https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/cancellation"
	specResponses    = "https://modelcontextprotocol.io/specification/2025-11-25/basic#responses"
	resilience       = "docs/resilience.md#"
	specTasks        = "https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/tasks"
	specExtTasks     = "https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/draft/tasks.md"
	// The sessionless revision.
	spec26HTTP    = "https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http"
	spec26Listen  = "https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/subscriptions"
	spec26Errors  = "https://modelcontextprotocol.io/specification/2026-07-28/basic#error-responses"
	sep2575       = "https://modelcontextprotocol.io/seps/2575-stateless-mcp"
	sep2663       = "https://modelcontextprotocol.io/seps/2663-tasks-extension"
	spec26Legacy  = spec26HTTP + "#earlier-streamable-http-revisions"
	spec26Version = spec26HTTP + "#protocol-version-header"
	spec26Change  = "https://modelcontextprotocol.io/specification/2026-07-28/changelog"
	spec26Compat  = "https://modelcontextprotocol.io/specification/2026-07-28/basic/versioning#backward-compatibility-with-initialization-based-versions"
)

var entries = []Entry{
	// Server: sessions (spec).
	{ID: "SESS-ID-CHARS", Level: Must, Side: Server, Section: "sessions", Revisions: WithSessions, SpecRef: specSessions,
		Summary: "The Mcp-Session-Id on the InitializeResult has only visible ASCII (0x21-0x7E)."},
	{ID: "SESS-ID-ENTROPY", Level: Should, Side: Server, Section: "sessions", Revisions: WithSessions, SpecRef: specSessions,
		Summary: "Session ids are unique and unguessable (at least 128 bits by length and alphabet)."},
	{ID: "SESS-MISSING-400", Level: Should, Side: Server, Section: "sessions", Revisions: WithSessions, SpecRef: specSessions,
		Summary: "A non-initialize request without a session id gets 400."},
	{ID: "SESS-UNKNOWN-404", Level: Must, Side: Server, Section: "sessions", Revisions: WithSessions, SpecRef: specSessions,
		Summary: "POST, GET and DELETE with an unknown session id get 404."},
	{ID: "SESS-DELETE", Level: Must, Side: Server, Section: "sessions", Revisions: WithSessions, SpecRef: specSessions, DependsOn: []string{"SESS-UNKNOWN-404"},
		Summary: "After a successful DELETE the id gets 404 (a 405 answer to DELETE skips the check)."},
	{ID: "SESS-REINIT-NEW", Level: Must, Side: Server, Section: "sessions", Revisions: WithSessions, SpecRef: specSessions,
		Summary: "After a request on an unknown session id (404, or another refusal, which SESS-UNKNOWN-404 grades), an initialize without a session id starts a new, working session with a different id."},
	{ID: "VER-INVALID-400", Level: Must, Side: Server, Section: "sessions", Revisions: WithSessions, Stateless: true, SpecRef: specVersion,
		Summary: "A request with an unsupported MCP-Protocol-Version gets 400."},
	{ID: "ORIGIN-403", Level: Must, Side: Server, Section: "sessions", Revisions: EveryRevision, Stateless: true, SpecRef: specSecurity,
		Summary: "A request with a present but disallowed Origin (origins.disallowed, default https://mcp-conform.invalid) gets 403."},

	// Server: streams and resumability (spec).
	{ID: "GET-SSE-OR-405", Level: Must, Side: Server, Section: "streams", Revisions: WithSessions, Stateless: true, SpecRef: specListening,
		Summary: "GET with Accept: text/event-stream and a valid session (none on a stateless target) gets text/event-stream or 405."},
	{ID: "GET-NO-RESPONSES", Level: Must, Side: Server, Section: "streams", Revisions: WithSessions, Stateless: true, SpecRef: specListening,
		Summary: "The standalone GET stream never carries a JSON-RPC response."},
	{ID: "GET-UNRELATED", Level: Should, Side: Server, Section: "streams", Revisions: WithSessions, Stateless: true, SpecRef: specListening, Needs: []Key{KeyNotifying},
		Summary: "A notification of a request whose POST stream is connected does not appear on the standalone GET stream (a SHOULD in every revision from 2025-03-26 to 2025-11-25)."},
	{ID: "MSG-ONE-STREAM", Level: Must, Side: Server, Section: "streams", Revisions: WithSessions, Stateless: true, SpecRef: specMultiple, Needs: []Key{KeyNotifying}, DependsOn: []string{"TOOL-AS-DECLARED"},
		Summary: "Each message goes to exactly one connected stream: no broadcast across GET and POST streams."},
	{ID: "MSG-RELATED-STREAM", Level: Should, Side: Server, Section: "streams", Revisions: WithSessions, Stateless: true, SpecRef: specSending, Needs: []Key{KeyNotifying},
		Summary: "A POST stream carries only its own request's progress notifications, not those of another call running in the session (or, on a stateless target, at the same time) (\"These messages SHOULD relate to the originating client request.\")."},
	{ID: "EVT-ID-UNIQUE", Level: Must, Side: Server, Section: "streams", Revisions: WithSessions, SpecRef: specResumability,
		Summary: "SSE event ids are unique across all streams of the session."},
	{ID: "EVT-REPLAY-STREAM", Level: Must, Side: Server, Section: "streams", Revisions: WithSessions, SpecRef: specResumability, Needs: []Key{KeyNotifying},
		Summary: "GET with Last-Event-ID replays only messages of the stream that id belongs to."},
	{ID: "EVT-REPLAY-POST", Level: May, Side: Server, Section: "streams", Revisions: WithSessions, SpecRef: specResumability, Needs: []Key{KeyNotifying}, DependsOn: []string{"TOOL-AS-DECLARED"},
		Summary: "A POST stream cut before its response resumes by GET with Last-Event-ID: missed notifications, then the response."},
	{ID: "SSE-PRIMING", Level: Should, Side: Server, Section: "streams", Revisions: WithSessions, Stateless: true, SpecRef: specSending,
		Summary: "An SSE stream that a POST opens starts with an event that has an id and empty data."},
	{ID: "SSE-RETRY-FIELD", Level: Should, Side: Server, Section: "streams", Revisions: WithSessions, SpecRef: specSending,
		Summary: "A server that closes an SSE connection on purpose sends a retry field first."},
	{ID: "DISCONNECT-NOT-CANCEL", Level: Should, Side: Server, Section: "streams", Revisions: WithSessions, SpecRef: specCancellation, Needs: []Key{KeyNotifying}, DependsOn: []string{"TOOL-AS-DECLARED", "EVT-REPLAY-POST"},
		Summary: "Dropping a POST stream does not cancel the request: it completes and its result is reachable by resumption."},

	// Server: JSON-RPC (spec).
	{ID: "JSONRPC-ID-ECHO", Level: Should, Side: Server, Section: "jsonrpc", Revisions: WithSessions, Stateless: true, SpecRef: specResponses,
		Summary: "A response carries its request's id exactly (2^53+1, 1.5, a 30-digit integer, a string), or the request is refused with -32600."},

	// Server: resilience.
	{ID: "GRACE-IDLE-SURVIVES", Level: Res, Side: Server, Section: "grace", Revisions: WithSessions, SpecRef: resilience + "grace-period-reaper", Needs: []Key{KeyGraceTimings}, Idle: true,
		Summary: "A session silent for less than idle threshold + grace period still works."},
	{ID: "GRACE-EXPIRES", Level: Res, Side: Server, Section: "grace", Revisions: WithSessions, SpecRef: resilience + "grace-period-reaper", Needs: []Key{KeyGraceTimings}, Idle: true, DependsOn: []string{"SESS-UNKNOWN-404"},
		Summary: "A session silent for idle threshold + grace period (+ one reaper interval) is gone: 404."},
	{ID: "GRACE-ACTIVITY-RESETS", Level: Res, Side: Server, Section: "grace", Revisions: WithSessions, SpecRef: resilience + "grace-period-reaper", Needs: []Key{KeyGraceTimings}, Idle: true,
		Summary: "A session used at intervals shorter than the idle threshold is never reaped."},
	{ID: "GRACE-LIVE-STREAM", Level: Res, Side: Server, Section: "grace", Revisions: WithSessions, SpecRef: resilience + "grace-period-reaper", Needs: []Key{KeyGraceTimings}, Idle: true,
		Summary: "A session whose standalone GET stream is connected is not reaped."},
	{ID: "GRACE-RECONNECT-CANCELS", Level: Res, Side: Server, Section: "grace", Revisions: WithSessions, SpecRef: resilience + "grace-period-reaper", Needs: []Key{KeyGraceTimings}, Idle: true, DependsOn: []string{"GRACE-IDLE-SURVIVES"},
		Summary: "A request during the grace period cancels the pending expiry."},
	{ID: "RECREATE-REINIT-200", Level: Res, Side: Server, Section: "recreate", Revisions: WithSessions, SpecRef: resilience + "transport-recreation",
		Summary: "initialize carrying a live session id gets a real InitializeResult (200) with the same Mcp-Session-Id."},
	{ID: "RECREATE-STATE-KEPT", Level: Res, Side: Server, Section: "recreate", Revisions: WithSessions, SpecRef: resilience + "transport-recreation", Needs: []Key{KeyStateful}, DependsOn: []string{"RECREATE-REINIT-200"},
		Summary: "Session state survives the re-initialize."},
	{ID: "RECREATE-WORKS-AFTER", Level: Res, Side: Server, Section: "recreate", Revisions: WithSessions, SpecRef: resilience + "transport-recreation", DependsOn: []string{"RECREATE-REINIT-200"},
		Summary: "After the re-initialize, tools/list, tools/call and a new GET stream work on the same id."},
	{ID: "RECREATE-OWNER-ONLY", Level: Res, Side: Server, Section: "recreate", Revisions: WithSessions, SpecRef: resilience + "session-ownership", Needs: []Key{KeyPrincipals}, DependsOn: []string{"SESS-UNKNOWN-404"},
		Summary: "A request for a session made with another principal's token is refused (403/404) and the session is untouched."},
	{ID: "RECREATE-CONCURRENT", Level: Res, Side: Server, Section: "recreate", Revisions: WithSessions, SpecRef: resilience + "transport-recreation", DependsOn: []string{"RECREATE-REINIT-200"},
		Summary: "Parallel re-initializes of one live session id all get a 200 InitializeResult with that id and leave one working session."},
	{ID: "RESUME-NO-INIT", Level: Res, Side: Server, Section: "recreate", Revisions: WithSessions, SpecRef: resilience + "page-refresh",
		Summary: "After every connection is cut, reusing the id without initialize (new GET, then POSTs) works."},
	{ID: "AUTH-REFRESH-REJOIN", Level: Res, Side: Server, Section: "recreate", Revisions: WithSessions, SpecRef: resilience + "token-refresh", Needs: []Key{KeyPrincipals, KeyRefreshedToken}, DependsOn: []string{"RECREATE-OWNER-ONLY"},
		Summary: "The session's principal presenting another token of its own (principals[0].refreshed_token, as a refresh gives it) rejoins its session, state kept; the other principal is still refused (403/404)."},
	{ID: "TOOL-AS-DECLARED", Level: Res, Side: Server, Section: "streams-res", Revisions: WithSessions, Stateless: true, SpecRef: resilience + "declared-notifications", Needs: []Key{KeyNotifying},
		Summary: "A call of the notifying tool that no fault disturbs delivers every notification the profile declares (tools.notifying), then its result: the checks that count them judge what a fault cost against that."},
	{ID: "GET-STALE-REPLACED", Level: Res, Side: Server, Section: "streams-res", Revisions: WithSessions, SpecRef: resilience + "stale-get-replacement",
		Summary: "A new GET while the previous GET connection is half-open is accepted (200), never 409."},
	{ID: "GET-LIVE-REPLACED", Level: Res, Side: Server, Section: "streams-res", Revisions: WithSessions, SpecRef: resilience + "stale-get-replacement",
		Summary: "A new GET while the previous one is connected is accepted and the old one is closed."},
	{ID: "GET-PRIMED", Level: Res, Side: Server, Section: "streams-res", Revisions: WithSessions, SpecRef: resilience + "resumable-standalone-stream",
		Summary: "A standalone GET stream starts with a priming event (an id and empty data), so a client cut before the first message can resume it."},
	{ID: "REDIRECT-ORPHANED", Level: Res, Side: Server, Section: "streams-res", Revisions: WithSessions, SpecRef: resilience + "orphaned-notification-redirect", Needs: []Key{KeyNotifying}, DependsOn: []string{"TOOL-AS-DECLARED"},
		Summary: "Notifications of a request whose POST stream died arrive on the standalone GET stream, in order, none lost."},
	{ID: "REDIRECT-NO-RESPONSE", Level: Res, Side: Server, Section: "streams-res", Revisions: WithSessions, SpecRef: resilience + "orphaned-notification-redirect", Needs: []Key{KeyNotifying}, ResumeRequired: true, DependsOn: []string{"TOOL-AS-DECLARED", "EVT-REPLAY-POST"},
		Summary: "The response of such a request is not sent on the GET stream; resuming its POST stream yields it."},
	{ID: "REPLAY-GAP", Level: Res, Side: Server, Section: "replay", Revisions: WithSessions, SpecRef: resilience + "event-replay", Needs: []Key{KeyNotifying}, ResumeRequired: true, DependsOn: []string{"TOOL-AS-DECLARED"},
		Summary: "Messages emitted while the client had no stream are replayed after Last-Event-ID: none lost, none twice, in order."},
	{ID: "REPLAY-SESSION-SCOPED", Level: Res, Side: Server, Section: "replay", Revisions: WithSessions, SpecRef: resilience + "event-replay", Needs: []Key{KeyNotifying},
		Summary: "A Last-Event-ID from session A presented on session B replays nothing of A."},
	{ID: "REPLAY-EVICTION", Level: Res, Side: Server, Section: "replay", Revisions: WithSessions, SpecRef: resilience + "event-replay", Needs: []Key{KeyNotifying, KeyEventMaxAge},
		Summary: "Resuming from an evicted id gets a clear 4xx answer (not 404, no hang, no 5xx, no silent partial replay)."},
	{ID: "ENVELOPE-404", Level: Res, Side: Server, Section: "envelope", Revisions: WithSessions, SpecRef: resilience + "session-expired-envelope", DependsOn: []string{"SESS-UNKNOWN-404"},
		Summary: "An unknown session id gets 404 application/json with the -32003 session-expired envelope."},
	{ID: "ENVELOPE-RESUME-HINT", Level: Res, Side: Server, Section: "envelope", Revisions: WithSessions, SpecRef: resilience + "session-expired-envelope", DependsOn: []string{"ENVELOPE-404"},
		Summary: "An envelope's data.resume names a listed tool (method) and its resume-token argument (via)."},
	{ID: "RESUME-TOKEN-OWNER", Level: Res, Side: Server, Section: "envelope", Revisions: WithSessions, SpecRef: resilience + "session-ownership", Needs: []Key{KeyPrincipals, KeyResumable}, DependsOn: []string{"ENVELOPE-RESUME-HINT"},
		Summary: "A resume token presented to data.resume.method by another principal than the one it was issued to is refused."},

	// Server: robustness (RES).
	{ID: "SLOW-READER", Level: Res, Side: Server, Section: "robustness", Revisions: WithSessions, Stateless: true, Exclusive: true, SpecRef: resilience + "slow-readers",
		Summary: "A client that stops reading one stream does not block the session's other requests, a replacement GET or DELETE (on a stateless target: the client's other requests)."},
	{ID: "RESTART-404", Level: Res, Side: Server, Section: "restart", Revisions: WithSessions, SpecRef: resilience + "restart-recovery", Restarts: true, Exclusive: true, DependsOn: []string{"SESS-UNKNOWN-404"},
		Summary: "After a server restart the old id gets the 404 envelope and a new initialize works."},
	{ID: "RESTART-HINT", Level: Res, Side: Server, Section: "restart", Revisions: WithSessions, SpecRef: resilience + "restart-recovery", Needs: []Key{KeyRecoveryHint}, Exclusive: true, DependsOn: []string{"RESTART-404"},
		Summary: "The 404 for a stale id carries a new Mcp-Session-Id of an initialized session that works at once."},

	// Server: replicas (a replicated deployment, --replica-url; requests alternate across replicas).
	{ID: "REPLICA-SESSION-SHARED", Level: Res, Side: Server, Section: "replicas", Revisions: WithSessions, Replicas: true, SpecRef: resilience + "horizontal-scale",
		Summary: "A session initialized on one replica is served by every other, with its state (tools.stateful, if declared)."},
	{ID: "REPLICA-NOTIFY-ROUTED", Level: Res, Side: Server, Section: "replicas", Revisions: WithSessions, Replicas: true, SpecRef: resilience + "horizontal-scale", Needs: []Key{KeyNotifying}, DependsOn: []string{"REPLICA-SESSION-SHARED", "TOOL-AS-DECLARED"},
		Summary: "A standalone GET held on replica B receives the notifications of a call running on replica A after the call's stream is cut."},
	{ID: "REPLICA-RESUME", Level: Res, Side: Server, Section: "replicas", Revisions: WithSessions, Replicas: true, SpecRef: resilience + "horizontal-scale", Needs: []Key{KeyNotifying}, ResumeRequired: true, DependsOn: []string{"REPLICA-SESSION-SHARED", "TOOL-AS-DECLARED"},
		Summary: "A POST stream cut on replica A is resumed on replica B with Last-Event-ID: every missed notification, then the response, exactly once."},
	{ID: "REPLICA-EXPIRE-ONCE", Level: Res, Side: Server, Section: "replicas", Revisions: WithSessions, Replicas: true, SpecRef: resilience + "horizontal-scale", Needs: []Key{KeyGraceTimings}, Idle: true, DependsOn: []string{"REPLICA-SESSION-SHARED"},
		Summary: "Expiry is decided once for all replicas: a session kept active through one replica lives on every other; once silent it is gone from all."},
	{ID: "REPLICA-LOSS", Level: Res, Side: Server, Section: "replicas", Revisions: WithSessions, Replicas: true, SpecRef: resilience + "horizontal-scale", Needs: []Key{KeyNotifying}, Restarts: true, Exclusive: true, DependsOn: []string{"REPLICA-SESSION-SHARED"},
		Summary: "Replica A (--server-cmd) killed with SIGKILL mid-call: the session goes on on replica B, and the call's stream resumed there is answered (a result, or an error naming its resume path in data.resume)."},
	// Server: tasks (2025-11-25 tasks utility; durable creation from the
	// io.modelcontextprotocol/tasks extension).
	{ID: "TASK-CREATE-FAST", Level: Should, Side: Server, Section: "tasks", Revisions: EveryRevision, Stateless: true, SpecRef: specTasks + "#creating-tasks", Needs: []Key{KeyTask}, DependsOn: []string{"TASK-DURABLE-CREATE"},
		Summary: "A tools/call with params.task answers a CreateTaskResult (a task working) at once, long before the tool would have finished."},
	{ID: "TASK-DURABLE-CREATE", Level: Must, Side: Server, Section: "tasks", Revisions: EveryRevision, Stateless: true, SpecRef: specExtTasks + "#task-creation", Needs: []Key{KeyTask},
		Summary: "A tasks/get on another connection and session sent right after the CreateTaskResult arrives resolves the task; with --replica-url, on every other replica too (\"A server MUST NOT return CreateTaskResult until the task is durably created\", \"until a tasks/get for the returned taskId would resolve\"; \"In eventually-consistent environments, the server MUST wait for consistency before responding\")."},
	{ID: "TASK-SURVIVES-CUT", Level: Should, Side: Server, Section: "tasks", Revisions: EveryRevision, Stateless: true, SpecRef: specTasks + "#transport-considerations", Needs: []Key{KeyTask}, DependsOn: []string{"TASK-DURABLE-CREATE"},
		Summary: "Cutting every connection while tasks/result waits does not cancel the task: it completes and its result is retrievable."},
	{ID: "TASK-RESULT-REPEATABLE", Level: Must, Side: Server, Section: "tasks", Revisions: EveryRevision, Stateless: true, SpecRef: specTasks + "#retrieving-task-results", Needs: []Key{KeyTask}, DependsOn: []string{"TASK-DURABLE-CREATE"},
		Summary: "tasks/result of a completed task answers the same result twice, and again after a reconnect, with the related-task _meta naming it."},
	{ID: "TASK-SURVIVES-REFRESH", Level: Res, Side: Server, Section: "tasks", Revisions: WithSessions, SpecRef: resilience + "tasks-bound-to-the-principal", Needs: []Key{KeyTask}, DependsOn: []string{"TASK-DURABLE-CREATE"},
		Summary: "After a refresh (every connection cut, the session abandoned) the same principal reaches the task from a new session; a session-scoped task store fails."},
	{ID: "TASK-PRINCIPAL-BOUND", Level: Must, Side: Server, Section: "tasks", Revisions: EveryRevision, Stateless: true, SpecRef: specTasks + "#security-considerations", Needs: []Key{KeyTask, KeyPrincipals}, DependsOn: []string{"TASK-DURABLE-CREATE"},
		Summary: "Another principal gets -32602 for tasks/get, tasks/result and tasks/cancel of the task, and its tasks/list does not show it."},
	{ID: "TASK-UNKNOWN-ID", Level: Must, Side: Server, Section: "tasks", Revisions: EveryRevision, Stateless: true, SpecRef: specTasks + "#error-handling", Needs: []Key{KeyTask},
		Summary: "tasks/get, tasks/result and tasks/cancel of an unknown task id answer -32602 at once: never a hang, a 5xx or a success."},
	{ID: "TASK-CANCEL-TERMINAL", Level: Must, Side: Server, Section: "tasks", Revisions: EveryRevision, Stateless: true, SpecRef: specTasks + "#cancelling-tasks", Needs: []Key{KeyTask}, DependsOn: []string{"TASK-DURABLE-CREATE"},
		Summary: "tasks/cancel of a completed task answers -32602; a cancelled working task is cancelled in the answer and stays cancelled."},
	{ID: "TASK-TTL-KEPT", Level: Should, Side: Server, Section: "tasks", Revisions: EveryRevision, Stateless: true, SpecRef: specTasks + "#task-lifecycle", Needs: []Key{KeyTask}, DependsOn: []string{"TASK-DURABLE-CREATE"},
		Summary: "A completed task's result is still retrievable shortly before its ttl elapses: the ttl reported in its CreateTaskResult, or the one the check asked for when the server granted longer."},
	{ID: "TASK-RESTART", Level: Res, Side: Server, Section: "tasks", Revisions: EveryRevision, Stateless: true, SpecRef: resilience + "tasks-across-restarts", Needs: []Key{KeyTask}, Restarts: true, Exclusive: true, DependsOn: []string{"TASK-DURABLE-CREATE"},
		Summary: "After a restart, a request for a task made before answers at once (the task, or -32602 if the store is not durable; never a hang or 5xx), and a new task runs to its result."},
	{ID: "TASK-MCP-NAME", Level: Must, Side: Server, Section: "tasks", Revisions: SessionlessOnly, SpecRef: specExtTasks + "#streamable-http-routing-headers", Needs: []Key{KeyTask},
		Summary: "2026-07-28, io.modelcontextprotocol/tasks: tasks/get without an Mcp-Name header, or with one naming another task, is refused with 400 and HeaderMismatch (-32020) (\"the client MUST set the Mcp-Name header to the value of params.taskId\"; servers \"MUST reject requests where the values specified in the headers do not match\", and a missing required standard header is a validation failure)."},
	{ID: "TASK-REMOVED-METHODS", Level: Must, Side: Server, Section: "tasks", Revisions: SessionlessOnly, SpecRef: sep2663, Needs: []Key{KeyTask},
		Summary: "2026-07-28, io.modelcontextprotocol/tasks: tasks/result and tasks/list answer 404 with -32601 (\"tasks/result is removed; clients calling it MUST receive -32601 (Method Not Found)\"; tasks/list is removed, and an RPC method the server does not implement \"MUST respond with 404 Not Found and a JSON-RPC error with code -32601\")."},
	{ID: "TASK-UNDECLARED", Level: Must, Side: Server, Section: "tasks", Revisions: SessionlessOnly, SpecRef: specExtTasks + "#error-handling", Needs: []Key{KeyTask},
		Summary: "2026-07-28, io.modelcontextprotocol/tasks: tasks/get and tasks/cancel by a request that does not declare the extension answer 400 with -32021 and data.requiredCapabilities.extensions naming it (\"Servers MUST return this error for non-declaring clients issuing tasks/get, tasks/update, and tasks/cancel requests\")."},

	// Server: the sessionless revision's HTTP transport (2026-07-28).
	{ID: "MODERN-VERSION-UNSUPPORTED", Level: Must, Side: Server, Section: "modern", Revisions: SessionlessOnly, SpecRef: spec26Version,
		Summary: "2026-07-28: a request naming a protocol version the server does not implement gets 400 and UnsupportedProtocolVersionError: -32022, data.supported listing its versions, data.requested, and the request's id (\"it MUST respond with 400 Bad Request and an UnsupportedProtocolVersionError listing its supported versions\")."},
	{ID: "MODERN-HEADER-MISMATCH", Level: Must, Side: Server, Section: "modern", Revisions: SessionlessOnly, SpecRef: spec26HTTP + "#server-validation",
		Summary: "2026-07-28: MCP-Protocol-Version differing from _meta's version, Mcp-Method differing from the method or missing, and Mcp-Name differing from a tools/call's name each get 400 and HeaderMismatch (-32020) (\"servers MUST return HTTP status 400 Bad Request and MUST include a JSON-RPC error response\" with -32020)."},
	{ID: "MODERN-METHOD-404", Level: Must, Side: Server, Section: "modern", Revisions: SessionlessOnly, SpecRef: spec26Version,
		Summary: "2026-07-28: a request of a method the server does not implement gets 404 with JSON-RPC error -32601 (\"it MUST respond with 404 Not Found and a JSON-RPC error with code -32601\")."},
	{ID: "MODERN-ERROR-ID", Level: Must, Side: Server, Section: "modern", Revisions: SessionlessOnly, SpecRef: spec26Errors,
		Summary: "2026-07-28: the errors for an unknown method, a header mismatch and an unsupported version carry their request's id exactly (strings and integers; JSONRPC-ID-ECHO tries stranger ids) (\"Error responses MUST include the same ID as the request they correspond to\")."},
	{ID: "MODERN-GET-405", Level: Should, Side: Server, Section: "modern", Revisions: SessionlessOnly, SpecRef: spec26Legacy,
		Summary: "2026-07-28: GET on the MCP endpoint, naming the revision, gets 405 (\"HTTP GET or DELETE to the MCP endpoint: respond with 405 Method Not Allowed\")."},
	{ID: "MODERN-DELETE-405", Level: Should, Side: Server, Section: "modern", Revisions: SessionlessOnly, SpecRef: spec26Legacy,
		Summary: "2026-07-28: DELETE on the MCP endpoint, naming the revision, gets 405 (\"HTTP GET or DELETE to the MCP endpoint: respond with 405 Method Not Allowed\")."},
	{ID: "MODERN-SESSION-IGNORED", Level: Should, Side: Server, Section: "modern", Revisions: SessionlessOnly, SpecRef: spec26Legacy,
		Summary: "2026-07-28: no answer carries an Mcp-Session-Id, and a request carrying one the server never issued is served as if it had none (\"An Mcp-Session-Id header on a request: ignore it, and do not mint or echo session IDs\")."},
	{ID: "MODERN-LAST-EVENT-ID-IGNORED", Level: Should, Side: Server, Section: "modern", Revisions: SessionlessOnly, SpecRef: spec26Legacy, Needs: []Key{KeyNotifying},
		Summary: "2026-07-28: a request carrying the Last-Event-ID of an earlier call's stream gets its own answer only, nothing of that call replayed (\"A Last-Event-ID header: ignore it; streams are not resumable\")."},
	{ID: "MODERN-CLOSE-CANCELS", Level: Must, Side: Server, Section: "modern", Revisions: SessionlessOnly, SpecRef: spec26HTTP + "#cancellation", Needs: []Key{KeyStepping},
		Summary: "2026-07-28: after the harness closes a call's response stream, the call's work stops: the count it advances per step (tools.stepping) holds still well before the call would have finished (\"Closing the SSE response stream MUST be treated by the server as cancellation of that request\"; the server \"SHOULD stop work on the cancelled request as soon as practical\")."},
	{ID: "MODERN-CLOSE-SILENT", Level: Must, Side: Server, Section: "modern", Revisions: SessionlessOnly, SpecRef: spec26HTTP + "#cancellation", Needs: []Key{KeyNotifying, KeyListen},
		Summary: "2026-07-28: after the harness closes a call's response stream, nothing of that call (its notifications, its response) arrives on an open subscriptions/listen stream or on a later request's stream (the server \"MUST NOT send any further messages for it\")."},
	{ID: "MODERN-SSE-UNBUFFERED", Level: Should, Side: Server, Section: "modern", Revisions: SessionlessOnly, SpecRef: spec26HTTP + "#receiving-messages",
		Summary: "2026-07-28: a call's SSE stream and a subscriptions/listen stream carry X-Accel-Buffering: no (\"When initiating an SSE stream, servers SHOULD include the X-Accel-Buffering: no header\")."},
	{ID: "MODERN-KEEPALIVE", Level: May, Side: Server, Section: "modern", Revisions: SessionlessOnly, SpecRef: spec26HTTP + "#receiving-messages", Needs: []Key{KeyListen, KeyKeepAlive},
		Summary: "2026-07-28: a quiet subscriptions/listen stream gets an SSE comment line within twice timings.keep_alive (servers \"are encouraged to periodically emit an SSE comment line\"; no keyword: graded as a MAY)."},

	// Server: subscriptions/listen (2026-07-28).
	{ID: "LISTEN-ACK-FIRST", Level: Must, Side: Server, Section: "listen", Revisions: SessionlessOnly, SpecRef: spec26Listen + "#acknowledgment", Needs: []Key{KeyListen},
		Summary: "2026-07-28: the first message of a subscriptions/listen stream is notifications/subscriptions/acknowledged, carrying the agreed notifications and the listen's id in _meta io.modelcontextprotocol/subscriptionId (\"The server MUST send notifications/subscriptions/acknowledged as the first message\")."},
	{ID: "LISTEN-ONLY-REQUESTED", Level: Must, Side: Server, Section: "listen", Revisions: SessionlessOnly, SpecRef: spec26Listen + "#opening-a-stream", Needs: []Key{KeyListen},
		Summary: "2026-07-28: a listen stream whose filter names another key gets none of the notifications a trigger makes for the first one's (\"The server MUST NOT send notification types the client has not explicitly requested\")."},
	{ID: "LISTEN-TAGGED", Level: Must, Side: Server, Section: "listen", Revisions: SessionlessOnly, SpecRef: sep2575, Needs: []Key{KeyListen},
		Summary: "2026-07-28: two listen streams with the same filter each get the trigger's notification tagged with their own listen's id (\"every notification delivered as part of an active subscription MUST include the subscription's request ID in _meta\")."},
	{ID: "LISTEN-RENEW", Level: Res, Side: Server, Section: "listen", Revisions: SessionlessOnly, SpecRef: resilience + "listening-across-a-cut", Needs: []Key{KeyListen},
		Summary: "2026-07-28: after the harness cuts a listen stream, a new subscriptions/listen is acknowledged and gets the notifications of what happens after it, tagged with its own id, none with the old one's."},
	{ID: "LISTEN-GRACEFUL-CLOSE", Level: Should, Side: Server, Section: "listen", Revisions: SessionlessOnly, SpecRef: spec26Listen + "#graceful-closure", Needs: []Key{KeyListen}, Restarts: true, Exclusive: true,
		Summary: "2026-07-28: a server restarted (SIGTERM) ends an open listen stream with the listen's completion response, tagged with its id, before closing it (\"it SHOULD respond to the original subscriptions/listen request with a completion result before closing the stream\") Cancellation says otherwise (\"A server MUST send notifications/cancelled referencing a subscriptions/listen request ID when it tears down that subscription stream\"); until the two pages agree the completion result is graded, as the schema's SubscriptionsListenResult, and a notifications/cancelled for the listen, before the result or after it, is neither required nor penalised, nor taken for the result."},

	// Client (graded in client mode).
	{ID: "CLI-PERSIST", Level: Res, Side: Client, Section: "client", Revisions: WithSessions, SpecRef: resilience + "client-persistence",
		Summary: "Session id, server URL, last event id, last result and logs are in durable storage."},
	{ID: "CLI-CLEAR-ON-DISCONNECT", Level: Res, Side: Client, Section: "client", Revisions: WithSessions, SpecRef: resilience + "client-persistence",
		Summary: "An explicit disconnect removes the stored session id; a crash or kill does not."},
	{ID: "CLI-RECONNECT", Level: Res, Side: Client, Section: "client", Revisions: WithSessions, SpecRef: resilience + "client-reconnect",
		Summary: "A restarted client reconnects to the stored session with stored tokens, the negotiated version and a GET stream."},
	{ID: "CLI-FALLBACK", Level: Res, Side: Client, Section: "client", Revisions: WithSessions, SpecRef: resilience + "client-reconnect",
		Summary: "If the stored session is gone, the client clears it and starts a fresh session."},
	{ID: "CLI-RESUME", Level: Res, Side: Client, Section: "client", Revisions: WithSessions, SpecRef: resilience + "client-resume",
		Summary: "The client resumes with Last-Event-ID; replayed events reach handlers exactly once."},
	{ID: "CLI-RETRY-FIELD", Level: Res, Side: Client, Section: "client", Revisions: WithSessions, SpecRef: resilience + "client-resume",
		Summary: "The client waits the server's retry milliseconds before reconnecting an SSE stream."},
	{ID: "CLI-404-REINIT", Level: Res, Side: Client, Section: "client", Revisions: WithSessions, SpecRef: resilience + "client-expiry-handling",
		Summary: "On 404 for a request with a session id, the client starts a new session and retries once."},
	{ID: "CLI-ENVELOPE", Level: Res, Side: Client, Section: "client", Revisions: WithSessions, SpecRef: resilience + "client-expiry-handling",
		Summary: "On the -32003 envelope the client re-initializes, re-issues resume.method with its token, reports one reconnect."},
	{ID: "CLI-RETRY-ONCE", Level: Res, Side: Client, Section: "client", Revisions: WithSessions, SpecRef: resilience + "client-expiry-handling",
		Summary: "An allow-listed session-expired error on the five operations triggers exactly one retry on the new session."},
	{ID: "CLI-CANCEL-WAIT", Level: Res, Side: Client, Section: "client", Revisions: WithSessions, SpecRef: resilience + "client-expiry-handling",
		Summary: "A cancel during the reconnect wait ends it promptly as a cancel."},
	{ID: "CLI-RESTART-HINT", Level: Res, Side: Client, Section: "client", Revisions: WithSessions, SpecRef: resilience + "restart-recovery",
		Summary: "On a 404 carrying a new Mcp-Session-Id the client adopts it and retries at once."},
	{ID: "CLI-TASK-PERSIST", Level: Res, Side: Client, Section: "client", Revisions: EveryRevision, SpecRef: specExtTasks,
		Summary: "A call run as a task (task-call) stores the task id at once: killed after its first task line, the client's stored state (show) names the task the server created."},
	{ID: "CLI-TASK-POLL-AFTER-KILL", Level: Res, Side: Client, Section: "client", Revisions: EveryRevision, SpecRef: specExtTasks,
		Summary: "Killed while its task works and started again (task-resume), the client polls that task with tasks/get, reports it completed and prints its result."},
	{ID: "CLI-TASK-POLL-INTERVAL", Level: Res, Side: Client, Section: "client", Revisions: EveryRevision, SpecRef: specTasks + "#task-status",
		Summary: "Two tasks/get of one task are never closer than the task's pollInterval (with 10% leeway), before and after a kill."},
	{ID: "CLI-TASK-NO-RECREATE", Level: Res, Side: Client, Section: "client", Revisions: EveryRevision, SpecRef: specExtTasks,
		Summary: "Killed and asked for the same call again (task-call), the client polls the task it stored: no second task-augmented tools/call."},
	// Client checks of the sessionless revision (run under --protocol-version 2026-07-28).
	{ID: "CLI-REISSUE", Level: Must, Side: Client, Section: "client", Revisions: SessionlessOnly, SpecRef: spec26Change,
		Summary: "2026-07-28: when a call's response stream breaks before its response, the client sends the call once more as a new request with a new id, prints its result, and sends no GET and no Last-Event-ID (\"A broken response stream loses the in-flight request; clients MUST re-issue it as a new request with a new request ID\")."},
	{ID: "CLI-UPGRADE", Level: Should, Side: Client, Section: "client", Revisions: SessionlessOnly, SpecRef: spec26Compat,
		Summary: "2026-07-28: a client that fell back to 2025-11-25 and finds the server restarted as 2026-07-28 only asks server/discover, sends the interrupted call once more in 2026-07-28, and presents no session id after that (\"a recognized modern JSON-RPC error ... identifies a modern server: the client retries with a supported version rather than falling back\"); graded twice, each time from an empty state directory: the call refused with 400 and -32022 listing 2026-07-28, then with 400 and -32020 (HeaderMismatch: a 2025-11-25 request lacks the headers and _meta of 2026-07-28, \"rejected per server validation with 400 Bad Request\"). Whether a later start remembers the upgrade is not graded here but in CLI-REVISION-CACHE: persisting it is a MAY, so a client that probes again at its next start still upgrades."},
	{ID: "CLI-DOWNGRADE", Level: Should, Side: Client, Section: "client", Revisions: SessionlessOnly, SpecRef: spec26HTTP + "#backward-compatibility",
		Summary: "2026-07-28: a client that spoke 2026-07-28 and finds the server restarted as 2025-11-25 only (a 400 without a recognized modern error) initializes a session and sends its call there once, without looping (\"If the body is empty or is not a recognized modern JSON-RPC error, fall back to initialize and continue with the legacy version for subsequent requests\")."},
	{ID: "CLI-REVISION-CACHE", Level: May, Side: Client, Section: "client", Revisions: SessionlessOnly, SpecRef: spec26Compat,
		Summary: "2026-07-28: a client remembers in its state directory the revision it found a server speaks (\"Clients SHOULD cache the result for the lifetime of the server process (stdio) or origin (HTTP), and MAY persist it across restarts of the same server configuration, re-probing if the cached assumption later fails\"): fallen back to 2025-11-25, restarted, it probes no more (no server/discover, no 2026-07-28 request) until the server, restarted as 2026-07-28 only, refuses its call; once it has moved to 2026-07-28 (CLI-UPGRADE grades the move), its next start speaks 2026-07-28 at once (no initialize, no 2025-11-25 request). The stored upgrade is graded here rather than in CLI-UPGRADE because keeping the revision across restarts is the client's own MAY."},
	{ID: "CLI-LISTEN-AGAIN", Level: Res, Side: Client, Section: "client", Revisions: SessionlessOnly, SpecRef: spec26Listen + "#graceful-closure",
		Summary: "2026-07-28: when its subscriptions/listen stream ends without the subscription's completion response, the client listens again once, within 3 s, for the same notifications, never with two listen streams open at once, and prints what the new stream delivers (\"a transport that closes without it indicates an unexpected disconnect, which the client MAY treat as a trigger to reconnect\"; this project's resilience design makes it a duty)."},
	{ID: "CLI-STATUS", Level: Res, Side: Client, Section: "client", Revisions: WithSessions, SpecRef: resilience + "client-status",
		Summary: "Status transitions connecting, connected, reconnecting, connected (reconnected), disconnected are reported."},
	{ID: "CLI-OAUTH-REFRESH", Level: Res, Side: Client, Section: "client", Revisions: WithSessions, SpecRef: resilience + "token-refresh",
		Summary: "An access token that expires mid-session gets 401 (with WWW-Authenticate); the client refreshes it once (refresh_token grant) and retries in the same session: no initialize, no new authorization, no loop."},
	{ID: "CLI-OAUTH-DURABLE", Level: Res, Side: Client, Section: "client", Revisions: WithSessions, SpecRef: resilience + "token-refresh",
		Summary: "A refreshed token is durable: killed after the refresh, the restarted client presents the refreshed token (never the stale one) in its stored session."},
	// Client checks of the sessionless revision (run under --protocol-version 2026-07-28).
}
