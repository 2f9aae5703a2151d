// Generated from GET /api/v1/openapi.json by `npm run client:generate` (openapi-typescript). Do not edit.

export interface paths {
    "/circuits": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Create a circuit owned by the caller */
        post: operations["CreateCircuit"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/circuits/{circuit_uid}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Fetch a circuit by uid
         * @description Authentication is optional: a bearer token widens what the caller can see.
         */
        get: operations["GetCircuit"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/circuits/{circuit_uid}/client.ts": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * A dependency-free TypeScript module for this circuit, typed from a version's query_schema and output_schema: run(input, options), waitFor(uid, options), events(uid, options)
         * @description The types come from the primary version, `version`, or the version `alias` draws (run() then sends the alias, so each run is drawn by its weights). The module compiles under `tsc --strict`; an input that does not fit the query schema fails to compile. Same read rules as GET /circuits/{uid}.
         *
         *     Authentication is optional: a bearer token widens what the caller can see.
         */
        get: operations["GetCircuitClientModule"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/users/{username}/circuits/{circuit_name}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Fetch a circuit by owner username and circuit name
         * @description Authentication is optional: a bearer token widens what the caller can see.
         */
        get: operations["GetCircuitByName"];
        /** Change a circuit's description, flags or license (owner only); only the fields sent change */
        put: operations["UpdateCircuit"];
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/circuits/{circuit_uid}/primary": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The uid of the primary version (404 when the circuit has no version yet)
         * @description Authentication is optional: a bearer token widens what the caller can see.
         */
        get: operations["GetCircuitPrimaryVersion"];
        /** Make a version of the circuit the primary one, run when a query names none (owner only); answers the circuit */
        put: operations["SetPrimaryCircuitVersion"];
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/users/{username}/circuits": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * A user's circuits, newest first; the owner's token adds their private ones
         * @description Authentication is optional: a bearer token widens what the caller can see.
         */
        get: operations["ListUserCircuits"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/circuits/{circuit_uid}/circuit-versions": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The versions of a circuit, newest first
         * @description Authentication is optional: a bearer token widens what the caller can see.
         */
        get: operations["ListCircuitVersions"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/circuits/{circuit_uid}/versions": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Publish the next immutable version of a circuit (owner only); the first version, or one sent with primary: true, becomes primary
         * @description The body is the definition (see GET /api/v1/definition-schema.json) plus an optional `primary`. An invalid definition is 400 with the reason.
         */
        post: operations["PublishCircuitVersion"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/circuits/{circuit_uid}/deprecate": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        /** Deprecate a circuit and all its versions (owner only); they still run */
        put: operations["DeprecateCircuit"];
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/users/{username}/circuits/{circuit_name}/stars": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Whether the caller has starred the circuit (boolean) */
        get: operations["GetCircuitStarred"];
        put?: never;
        /** Star a circuit (idempotent); payload {starred, star_count} */
        post: operations["StarCircuit"];
        /** Unstar a circuit (idempotent); payload {starred, star_count} */
        delete: operations["UnstarCircuit"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/users/stars": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The caller's starred circuits, most recently starred first; pages of at most 50 (default 50) */
        get: operations["ListStarredCircuits"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/users/{username}/circuits/{circuit_name}/ping": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Whether the caller can read the circuit (boolean; false when it does not exist) */
        get: operations["PingCircuit"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/users/{username}/circuits/{circuit_name}/embeds": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The circuits that embed this one, newest first; at most 200 in all
         * @description Authentication is optional: a bearer token widens what the caller can see.
         */
        get: operations["ListCircuitEmbeds"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/users/{username}/circuits/{circuit_name}/explain": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * A plain-words breakdown of the circuit's primary version
         * @description Authentication is optional: a bearer token widens what the caller can see.
         */
        get: operations["ExplainCircuit"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/circuits/{circuit_uid}/aliases/{name}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * One alias of the circuit: its routes and when they were set
         * @description Authentication is optional: a bearer token widens what the caller can see.
         */
        get: operations["GetCircuitAlias"];
        /**
         * Create an alias or give it new routes (owner only); the routes it had go to its history. A rollback is a PUT of routes from the history
         * @description Queries that send `context.alias` run a version drawn by these weights: the same Idempotency-Key always draws the same version. The same routes again change nothing.
         */
        put: operations["SetCircuitAlias"];
        post?: never;
        /** Delete an alias and its history (owner only); answers the alias as it was. Runs drawn from it keep its name */
        delete: operations["DeleteCircuitAlias"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/circuits/{circuit_uid}/aliases": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The circuit's aliases, by name
         * @description Authentication is optional: a bearer token widens what the caller can see.
         */
        get: operations["ListCircuitAliases"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/circuits/{circuit_uid}/aliases/{name}/history": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Every route set the alias had before its current one, newest first
         * @description Authentication is optional: a bearer token widens what the caller can see.
         */
        get: operations["ListCircuitAliasHistory"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/circuit-adaptors/{adaptor_uid}/query": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Start a run of the adaptor's circuit; returns {uid, state: PROVISIONED, is_public}. Send Idempotency-Key to make retries safe */
        post: operations["QueryCircuitAdaptor"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/circuit-runs/{uid}/cancel": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Cancel a run (its owner only): PROVISIONED ends at once, RUNNING has its steps aborted; it ends EXCEPTION with error.code Canceled. A terminal run is answered as it is */
        post: operations["CancelCircuitRun"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/circuit-runs/{uid}/replay": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Replay a terminal run (its owner only): a new run of its circuit, answered like a query (PROVISIONED) with replay_of. mode recorded (default) reuses the original's output for every llm, http, blob and circuit step whose rendered request is unchanged; live executes every step
         * @description The new run runs the original's version unless `version_uid` (a version of the same circuit) and the original's input unless `input` (checked against the version's query schema). It is charged like any run (reused steps cost 0 credits). 409 when the run is not COMPLETED or EXCEPTION. Compare the two with GET /circuit-runs/{a}/compare/{b}.
         */
        post: operations["ReplayCircuitRun"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/circuit-runs/{a}/compare/{b}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Compare two runs: {output: {status: same | changed, a, b}, steps: {<id>: {status: same | changed | added | removed, a, b}}}; both runs must be readable by the caller
         * @description Authentication is optional: a bearer token widens what the caller can see.
         */
        get: operations["CompareCircuitRuns"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/circuit-runs/{uid}/approvals/{step_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Decide an approval step of a run (its owner only): approved, the run goes on with {approved, comment, data, resolved_at} as the step's output; rejected, it ends EXCEPTION with error.code Rejected
         * @description The steps a run waits on are its `waiting_for` (owner only). The answer is the run as GET /circuit-runs/{uid} shows it. The same decision again (the same `approved`) answers the run as it is and changes nothing.
         */
        post: operations["ResolveApproval"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/circuit-runs/{uid}/signals/{step_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Send a signal to a wait step of a run (its owner only): the step's output is `data` and the run goes on
         * @description The steps a run waits on are its `waiting_for` (owner only); a signal step there also has a `callback_url` that takes the same signal without a token. The answer is the run as GET /circuit-runs/{uid} shows it. The same data again answers the run as it is and changes nothing.
         */
        post: operations["SignalCircuitRun"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/circuit-runs/{uid}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Fetch a run; private runs need the token of the user who started them
         * @description With `Prefer: wait=N` (1–60; bare `wait`: 60) the answer waits until the run is COMPLETED or EXCEPTION or N seconds pass, holding no database connection, and says `Preference-Applied: wait=N`: a client waits for a run by asking again until it is terminal, never by polling.
         *
         *     Authentication is optional: a bearer token widens what the caller can see.
         */
        get: operations["GetCircuitRun"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/circuit-versions/{version_uid}/circuit-runs": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List the completed public runs of a version, newest first
         * @description Authentication is optional: a bearer token widens what the caller can see.
         */
        get: operations["ListCircuitVersionRuns"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/circuits/{circuit_uid}/circuit-runs": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List the completed public runs of a circuit across its versions, newest first
         * @description Authentication is optional: a bearer token widens what the caller can see.
         */
        get: operations["ListCircuitRuns"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/circuit-runs/{uid}/events/url": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * A signed URL of the run's event stream that a browser's EventSource can open without an Authorization header: {url, expires_at} (at most 5 minutes)
         * @description Same read rules as GET /circuit-runs/{uid}; the URL reads the stream as the caller (its signature covers the run, the expiry and the caller). An expired signature is 401, a tampered one 403.
         *
         *     Authentication is optional: a bearer token widens what the caller can see.
         */
        post: operations["CreateCircuitRunEventsUrl"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/circuit-runs/{uid}/events": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Live updates of a run (server-sent events)
         * @description A `text/event-stream` of the run's event log: `id:` is the event's seq (1, 2, … without gaps), `event:` its kind. `state` events carry the same JSON as the payload of GET /circuit-runs/{uid}; `step` events `{step_id, kind, status, started_at, ended_at?, credits?, error? (owner only)}`; `output` events `{step_id, delta}`. Without `Last-Event-ID` the first event is the current run; `Last-Event-ID: N` replays every event after N, then follows live (a state name is accepted too). The stream closes after a terminal state; 204 when everything was seen. Same authentication as the GET. Served by src/http/run-events.sse.ts.
         *
         *     Authentication is optional: a bearer token widens what the caller can see.
         */
        get: operations["StreamCircuitRunEvents"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/boards": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List the caller's boards, newest first */
        get: operations["ListMyBoards"];
        put?: never;
        /** Create a board owned by the caller (409 Conflict when the caller has a board of that name) */
        post: operations["CreateBoard"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/boards/by-username/{username}/{board_name}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Fetch a board by owner username and board name (private boards only to the owner)
         * @description Authentication is optional: a bearer token widens what the caller can see.
         */
        get: operations["GetBoardByName"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/boards/{board_uid}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Fetch a board by uid (private boards only to the owner)
         * @description Authentication is optional: a bearer token widens what the caller can see.
         */
        get: operations["GetBoard"];
        /** Change the fields sent (owner only; renaming onto a taken name is 409) */
        put: operations["UpdateBoard"];
        post?: never;
        /** Delete a board with its memberships and stars, keeping its circuits (owner only); payload true */
        delete: operations["DeleteBoard"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/boards/{board_uid}/circuits": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List the circuits of a board that the caller may see (private boards only to the owner)
         * @description Authentication is optional: a bearer token widens what the caller can see.
         */
        get: operations["ListBoardCircuits"];
        put?: never;
        /** Add a circuit to a board (owner only; idempotent); payload the board */
        post: operations["AddCircuitToBoard"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/boards/{board_uid}/circuits/{circuit_uid}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /** Remove a circuit from a board, never the circuit (owner only; 404 when not in the board); payload the board */
        delete: operations["RemoveCircuitFromBoard"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/users/{username}/boards/{board_name}/stars": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The caller's star record on the board, or 404 when not starred */
        get: operations["GetBoardStar"];
        put?: never;
        /** Star a board the caller may read (idempotent); payload the star record */
        post: operations["StarBoard"];
        /** Unstar a board (idempotent); payload true */
        delete: operations["UnstarBoard"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/users/{username}/boards/{board_name}/ping": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Whether the caller can read the board (false when it does not exist)
         * @description Authentication is optional: a bearer token widens what the caller can see.
         */
        get: operations["PingBoard"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/search": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Search public circuits and public user profiles (rate limited per client)
         * @description Public circuits and public user profiles, best match first (an exact name match first of all). `meta.total_count` is exact up to 1,000; beyond, it is 1,000 (at least that many match) and pages end there. When more than 1,000 circuits (or users) match, the ranking considers 1,000 of them plus every exact name match: refine the query to see others.
         */
        get: operations["Search"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/blobs/{uid}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Blob metadata; blob_type and path only for admin tokens. Each call counts in total_reads
         * @description Authentication is optional: a bearer token widens what the caller can see.
         */
        get: operations["GetBlob"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/blobs/{uid}/download": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Redirects (302) to a signed, expiring URL of the content
         * @description Authentication is optional: a bearer token widens what the caller can see.
         */
        get: operations["GetBlobDownloadUrl"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/users/me": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Your profile, with your credit balance and the credits your runs in progress hold */
        get: operations["GetMe"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/users/circuit-runs": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List your runs in any state (private and failed ones too), newest first
         * @description Filter by metadata with `metadata.<key>=<value>` query parameters (any number; the key URL-encoded as needed): only runs whose metadata has every pair.
         */
        get: operations["ListMyCircuitRuns"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/users/circuit-runs/cancel": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Cancel your runs of a filter still PROVISIONED or RUNNING, as POST /circuit-runs/{uid}/cancel does each: {matched, canceled, truncated}; at most 10000 a call
         * @description `matched` counts every run of the filter still in flight; the call acts on the oldest 10000 of them (`truncated` is true when more matched: call again for the rest). `canceled` counts those this call asked to stop: a PROVISIONED run ends EXCEPTION Canceled at once, a RUNNING one is told to stop and ends Canceled within a second or so; a run asked before is not counted again. Only your own runs are touched, whatever the filter; a filter matching nothing answers 0s. Send Idempotency-Key to make retries safe.
         */
        post: operations["CancelMyCircuitRuns"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/users/circuit-runs/replay": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Replay your ended runs of a filter as one batch, as POST /circuit-runs/{uid}/replay does each: {matched, replayed, batch_uid, truncated}; at most 10000 a call
         * @description `matched` counts every COMPLETED or EXCEPTION run of the filter; the call replays the oldest 10000 of them (`truncated` is true when more matched: narrow the filter with created_after for the rest). Each replay runs its original's version and input; together they form the batch `batch_uid` (GET /batches/{uid}), charged and admitted as a batch's runs are (replays the balance cannot cover end InsufficientCredits). Only your own runs are read, whatever the filter; a filter matching nothing answers 0 and no batch. Send Idempotency-Key to make retries safe.
         */
        post: operations["ReplayMyCircuitRuns"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/users/credit-ledger": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List every change of your credit balance (grants and run charges), newest first
         * @description Grants have a positive amount, run charges zero or less; for every user the amounts add up to the balance.
         */
        get: operations["ListMyCreditLedger"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/users/tokens": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List your active API tokens, newest first, with their limits; never the tokens themselves */
        get: operations["ListMyApiTokens"];
        put?: never;
        /**
         * Create an API token for yourself, optionally limited; the token is in this answer only
         * @description A token with any limit may not create tokens (403). Each limit left out is none: every scope, no expiry, any circuit, no daily credit cap.
         */
        post: operations["CreateApiToken"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/webhooks/default/secret": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Your webhook signing secret ({key: "whsec_…"}), created on first read; rotate it in /settings */
        get: operations["GetWebhookSecret"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/circuit-runs/{uid}/webhook-deliveries": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Attempts at delivering the run's webhook messages, oldest first (event, attempt, status_code, error, delivered_at); only the user who started the run */
        get: operations["ListCircuitRunWebhookDeliveries"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/circuits/{circuit_uid}/schedules": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The circuit's schedules, oldest first (owner only) */
        get: operations["ListCircuitSchedules"];
        put?: never;
        /** Run the circuit on a cron schedule, as you (owner only); each fire is an ordinary, charged run */
        post: operations["CreateCircuitSchedule"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/schedules/{uid}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A schedule (its creator only) */
        get: operations["GetCircuitSchedule"];
        /** Pause or resume a schedule ({is_paused}), or change its cron, timezone, input, version or visibility; absent fields keep their value */
        put: operations["UpdateCircuitSchedule"];
        post?: never;
        /** Delete a schedule; it never fires again (its runs stay) */
        delete: operations["DeleteCircuitSchedule"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/circuit-adaptors/{adaptor_uid}/batches": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Submit 1–1000 inputs at once; each becomes an ordinary run carrying batch_uid. Returns {uid, total, counts}
         * @description Every input is checked against the version's query schema first: one invalid input refuses the whole batch (400 naming `inputs[i]`) and nothing is created. The runs are admitted in input order while the balance covers their base credit; the rest end at once EXCEPTION with error.code InsufficientCredits (charged nothing).
         */
        post: operations["CreateCircuitBatch"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/circuit-adaptors/{adaptor_uid}/estimate": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * What a run of this input may cost: {min, max, steps: {<id>: {min, max}}}, base credit included; nothing runs
         * @description A sound bound for a run that completes: an llm step counts its rendered prompt's tokens plus max_tokens for every attempt its retry policy allows (a prompt that reads other steps' outputs counts RUN_MAX_RESULT_BYTES); an embedded circuit counts its own bound. A query whose max_credits is at least `max` never ends BudgetExceeded.
         */
        post: operations["EstimateCircuitAdaptor"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/batches/{uid}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A batch (its submitter only): {uid, circuit_uid? (absent for the replays of runs of several circuits), total, counts: {PROVISIONED, RUNNING, COMPLETED, EXCEPTION}, created_at, canceled_at?} */
        get: operations["GetCircuitBatch"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/batches/{uid}/runs": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List a batch's runs in submission order (its submitter only) */
        get: operations["ListCircuitBatchRuns"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/batches/{uid}/cancel": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Cancel a batch (its submitter only): every run not yet ended is canceled as POST /circuit-runs/{uid}/cancel does; answers the batch */
        post: operations["CancelCircuitBatch"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export type webhooks = Record<string, never>;
export interface components {
    schemas: {
        Error: {
            error: {
                message: string;
                /** @enum {string} */
                code: "BadClientData" | "Unauthorized" | "InsufficientCredits" | "BudgetExceeded" | "NotAllowed" | "NotFound" | "Conflict" | "IdempotencyKeyReused" | "PayloadTooLarge" | "RequestTimeout" | "UnsupportedMediaType" | "RateLimited" | "Internal";
            };
        };
        PageMeta: {
            total_count: number;
            limit: number;
            page: number;
        };
        /** @description Present when something about the resource needs attention, e.g. it is deprecated. */
        Notices: {
            code: string;
            message: string;
        }[];
        /** @description A COMPLETED run's result: its output and each step's record */
        RunResult: {
            /** @description The circuit's output (its `output` template rendered); see the version's output_schema */
            output: unknown;
            /** @description One record per step id */
            steps: {
                [key: string]: components["schemas"]["RunStepResult"];
            };
        };
        RunStepResult: {
            /** @description The step kind (llm, http, transform, …) */
            kind: string;
            /** @description The step's output */
            output: unknown;
            /** Format: date-time */
            started_at: string;
            /** Format: date-time */
            ended_at: string;
            /** @description Credits the step cost */
            credits: number;
            usage?: components["schemas"]["LlmUsage"];
            /** @description Served from the step cache: no upstream call, 0 credits */
            cached?: boolean;
            /** @description A recorded replay reused the original run's output: no upstream call, 0 credits */
            replayed?: boolean;
        };
        /** @description Tokens an `llm` step used (all attempts); absent on other kinds */
        LlmUsage: {
            prompt_tokens: number;
            completion_tokens: number;
            total_tokens: number;
        };
        RunComparisonEntry: {
            /** @enum {string} */
            status: "same" | "changed" | "added" | "removed";
            /** @description Any JSON value */
            a?: unknown;
            /** @description Any JSON value */
            b?: unknown;
        };
    };
    responses: {
        /** @description 400 BadClientData: Invalid payload, parameter or definition */
        BadClientData: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description 401 Unauthorized: Missing or invalid bearer token */
        Unauthorized: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description 402 InsufficientCredits: The balance cannot cover the run */
        InsufficientCredits: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description 402 BudgetExceeded: The run's max_credits cannot cover it */
        BudgetExceeded: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description 403 NotAllowed: The token is valid but not allowed to do this */
        NotAllowed: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description 404 NotFound: No such resource (or route) */
        NotFound: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description 409 Conflict: The request conflicts with the current state (see the route) */
        Conflict: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description 422 IdempotencyKeyReused: The Idempotency-Key was already used by the caller with a different request */
        IdempotencyKeyReused: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description 413 PayloadTooLarge: The request body is over 1 MiB */
        PayloadTooLarge: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description 408 RequestTimeout: The request body was not received in full within BODY_TIMEOUT_MS; the connection is closed */
        RequestTimeout: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description 415 UnsupportedMediaType: The request body is not JSON (send Content-Type: application/json) */
        UnsupportedMediaType: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description 429 RateLimited: Rate limit hit; see Retry-After */
        RateLimited: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                "Retry-After": components["headers"]["Retry-After"];
                "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                RateLimit: components["headers"]["RateLimit"];
                "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description 500 Internal: Unexpected server error (details are logged, never shown) */
        Internal: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
    };
    parameters: {
        /** @description Makes a retried POST safe: the same caller sending the same key (printable ASCII, at most 255 characters) within 24 hours gets the first answer again and starts no second run. The same key with a different request body is 409 Conflict. */
        "Idempotency-Key": string;
        /** @description RFC 7240 preferences; preferences the route does not know are ignored. */
        Prefer: string;
        /** @description RFC 9110 conditional GET: the `ETag` of the copy the client holds (or several, comma-separated, or `*`). When the answer would have that ETag it is 304 Not Modified without a body, so a client polling a run downloads it only when it changed. */
        "If-None-Match": string;
        /** @description Server-sent events: the `id:` of the last event the client received; the stream resumes after it (an EventSource sends it when it reconnects). */
        "Last-Event-ID": string;
    };
    requestBodies: never;
    headers: {
        /** @description The quota policy (IETF httpapi RateLimit fields draft): a structured-field list of one item, the policy name with its quota `q` and window `w` in seconds, e.g. `"runs";q=600;w=60`. */
        "RateLimit-Policy": string;
        /** @description What is left of the quota (IETF httpapi RateLimit fields draft): the policy name with the requests remaining `r` and the seconds `t` until the window resets, e.g. `"runs";r=599;t=42`. */
        RateLimit: string;
        /** @description Legacy (earlier drafts; RateLimit-Policy says the same): requests allowed in the current window. */
        "RateLimit-Limit": string;
        /** @description Legacy (earlier drafts; RateLimit says the same): requests left in the current window. */
        "RateLimit-Remaining": string;
        /** @description Legacy (earlier drafts; RateLimit says the same): seconds until the window resets. */
        "RateLimit-Reset": string;
        /** @description Seconds to wait before retrying (RFC 9110). */
        "Retry-After": string;
        /** @description RFC 9745: present when the response is about a deprecated circuit, one of its versions or one of its runs; `@` and the Unix time (seconds) at which the circuit was deprecated. The body also carries a `deprecated` notice. */
        Deprecation: string;
        /** @description RFC 9110 weak entity tag of the response body: send it back in `If-None-Match` to be answered 304 while the body is the same. */
        ETag: string;
        /** @description RFC 7240: the preferences of `Prefer` that were honoured, e.g. `wait=30`. */
        "Preference-Applied": string;
        /** @description The target URL (a signed, expiring storage URL). */
        Location: string;
        /** @description The request id on every response and on the request’s log lines; a valid incoming `X-Request-Id` is echoed. */
        "X-Request-Id": string;
    };
    pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
    CreateCircuit: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @description Unique among the caller's circuits; url-safe */
                    name: string;
                    description?: string;
                    /** @description Default false: only the owner sees or runs a private circuit */
                    is_private?: boolean;
                    /** @description Default false: listed and runnable by anyone, but its object, versions and explain need the owner's token */
                    is_protected?: boolean;
                    /** @description A license identifier, e.g. MIT */
                    license_type?: string;
                    /** @description An existing metric configuration of the caller to attach */
                    user_circuit_metric_uid?: string;
                };
            };
        };
        responses: {
            /** @description Success */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    Deprecation: components["headers"]["Deprecation"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        status: "success";
                        payload: {
                            uid: string;
                            name: string;
                            description: string;
                            username: string;
                            is_private: boolean;
                            is_protected: boolean;
                            license_type: string | null;
                            user_circuit_metric_uid: string | null;
                            is_deprecated: boolean;
                            star_count: number;
                            adaptor_uid: string;
                            primary_version_uid: string | null;
                            /** Format: date-time */
                            created_at: string;
                            /** Format: date-time */
                            updated_at: string;
                        };
                        notices?: components["schemas"]["Notices"];
                    };
                };
            };
            400: components["responses"]["BadClientData"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["NotAllowed"];
            404: components["responses"]["NotFound"];
            408: components["responses"]["RequestTimeout"];
            /** @description Conflict: The caller already has a circuit of that name */
            409: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            500: components["responses"]["Internal"];
        };
    };
    GetCircuit: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                circuit_uid: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    Deprecation: components["headers"]["Deprecation"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        status: "success";
                        payload: {
                            uid: string;
                            name: string;
                            description: string;
                            username: string;
                            is_private: boolean;
                            is_protected: boolean;
                            license_type: string | null;
                            user_circuit_metric_uid: string | null;
                            is_deprecated: boolean;
                            star_count: number;
                            adaptor_uid: string;
                            primary_version_uid: string | null;
                            /** Format: date-time */
                            created_at: string;
                            /** Format: date-time */
                            updated_at: string;
                        };
                        notices?: components["schemas"]["Notices"];
                    };
                };
            };
            400: components["responses"]["BadClientData"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["NotAllowed"];
            404: components["responses"]["NotFound"];
            500: components["responses"]["Internal"];
        };
    };
    GetCircuitClientModule: {
        parameters: {
            query?: {
                /** @description A version of this circuit (default: the primary version) */
                version?: string;
                /** @description Instead of version: an alias of this circuit */
                alias?: string;
            };
            header?: never;
            path: {
                circuit_uid: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A TypeScript module (source text) */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    Deprecation: components["headers"]["Deprecation"];
                    [name: string]: unknown;
                };
                content: {
                    "application/typescript": string;
                };
            };
            /** @description BadClientData: Both version and alias were sent */
            400: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["NotAllowed"];
            /** @description NotFound: No such circuit, version of it, alias of it, or primary version */
            404: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            500: components["responses"]["Internal"];
        };
    };
    GetCircuitByName: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                username: string;
                circuit_name: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    Deprecation: components["headers"]["Deprecation"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        status: "success";
                        payload: {
                            uid: string;
                            name: string;
                            description: string;
                            username: string;
                            is_private: boolean;
                            is_protected: boolean;
                            license_type: string | null;
                            user_circuit_metric_uid: string | null;
                            is_deprecated: boolean;
                            star_count: number;
                            adaptor_uid: string;
                            primary_version_uid: string | null;
                            /** Format: date-time */
                            created_at: string;
                            /** Format: date-time */
                            updated_at: string;
                        };
                        notices?: components["schemas"]["Notices"];
                    };
                };
            };
            400: components["responses"]["BadClientData"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["NotAllowed"];
            404: components["responses"]["NotFound"];
            500: components["responses"]["Internal"];
        };
    };
    UpdateCircuit: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                username: string;
                circuit_name: string;
            };
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/json": {
                    description?: string;
                    is_private?: boolean;
                    is_protected?: boolean;
                    license_type?: string;
                };
            };
        };
        responses: {
            /** @description Success */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    Deprecation: components["headers"]["Deprecation"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        status: "success";
                        payload: {
                            uid: string;
                            name: string;
                            description: string;
                            username: string;
                            is_private: boolean;
                            is_protected: boolean;
                            license_type: string | null;
                            user_circuit_metric_uid: string | null;
                            is_deprecated: boolean;
                            star_count: number;
                            adaptor_uid: string;
                            primary_version_uid: string | null;
                            /** Format: date-time */
                            created_at: string;
                            /** Format: date-time */
                            updated_at: string;
                        };
                        notices?: components["schemas"]["Notices"];
                    };
                };
            };
            400: components["responses"]["BadClientData"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["NotAllowed"];
            404: components["responses"]["NotFound"];
            408: components["responses"]["RequestTimeout"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            500: components["responses"]["Internal"];
        };
    };
    GetCircuitPrimaryVersion: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                circuit_uid: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    Deprecation: components["headers"]["Deprecation"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        status: "success";
                        payload: string;
                        notices?: components["schemas"]["Notices"];
                    };
                };
            };
            400: components["responses"]["BadClientData"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["NotAllowed"];
            404: components["responses"]["NotFound"];
            500: components["responses"]["Internal"];
        };
    };
    SetPrimaryCircuitVersion: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                circuit_uid: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @description A version of this circuit (404 otherwise) */
                    version_uid: string;
                };
            };
        };
        responses: {
            /** @description Success */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    Deprecation: components["headers"]["Deprecation"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        status: "success";
                        payload: {
                            uid: string;
                            name: string;
                            description: string;
                            username: string;
                            is_private: boolean;
                            is_protected: boolean;
                            license_type: string | null;
                            user_circuit_metric_uid: string | null;
                            is_deprecated: boolean;
                            star_count: number;
                            adaptor_uid: string;
                            primary_version_uid: string | null;
                            /** Format: date-time */
                            created_at: string;
                            /** Format: date-time */
                            updated_at: string;
                        };
                        notices?: components["schemas"]["Notices"];
                    };
                };
            };
            400: components["responses"]["BadClientData"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["NotAllowed"];
            404: components["responses"]["NotFound"];
            408: components["responses"]["RequestTimeout"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            500: components["responses"]["Internal"];
        };
    };
    ListUserCircuits: {
        parameters: {
            query?: {
                /** @description Items per page (default 10; larger values are capped at 100) */
                limit?: number;
                /** @description 1-based page number (default 1) */
                page?: number;
            };
            header?: never;
            path: {
                username: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description One page of results */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    Deprecation: components["headers"]["Deprecation"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        meta: components["schemas"]["PageMeta"];
                        data: {
                            uid: string;
                            name: string;
                            description: string;
                            username: string;
                            is_private: boolean;
                            is_protected: boolean;
                            license_type: string | null;
                            user_circuit_metric_uid: string | null;
                            is_deprecated: boolean;
                            star_count: number;
                            adaptor_uid: string;
                            primary_version_uid: string | null;
                            /** Format: date-time */
                            created_at: string;
                            /** Format: date-time */
                            updated_at: string;
                        }[];
                    };
                };
            };
            400: components["responses"]["BadClientData"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["NotAllowed"];
            404: components["responses"]["NotFound"];
            500: components["responses"]["Internal"];
        };
    };
    ListCircuitVersions: {
        parameters: {
            query?: {
                /** @description Items per page (default 10; larger values are capped at 100) */
                limit?: number;
                /** @description 1-based page number (default 1) */
                page?: number;
            };
            header?: never;
            path: {
                circuit_uid: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description One page of results */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    Deprecation: components["headers"]["Deprecation"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        meta: components["schemas"]["PageMeta"];
                        data: {
                            uid: string;
                            circuit_uid: string;
                            number: number;
                            /** @description The circuit definition (its format: GET /api/v1/definition-schema.json) */
                            definition: {
                                [key: string]: unknown;
                            };
                            is_primary: boolean;
                            is_deprecated: boolean;
                            /** Format: date-time */
                            created_at: string;
                        }[];
                    };
                };
            };
            400: components["responses"]["BadClientData"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["NotAllowed"];
            404: components["responses"]["NotFound"];
            500: components["responses"]["Internal"];
        };
    };
    PublishCircuitVersion: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                circuit_uid: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @description JSON Schema (draft 2020-12) of a run's input; its type must be object */
                    query_schema: {
                        [key: string]: unknown;
                    };
                    /** @description JSON Schema (draft 2020-12) of the run's output: a run whose output fails it ends EXCEPTION OutputContractViolation */
                    output_schema?: {
                        [key: string]: unknown;
                    };
                    /** @description The steps, 1 to 100; each has an id and a kind, which decides its other fields */
                    steps: {
                        [key: string]: unknown;
                    }[];
                    /** @description JSONata over {input, steps}: the run's output (default: the last step's) */
                    output?: string;
                    /** @description Free text about this version */
                    description?: string;
                    /** @description {"limit": 1–10000, "key"?: "{{input.<field>}}…"}: at most limit runs of the circuit RUNNING per rendered key (per circuit without one); the rest wait PROVISIONED */
                    concurrency?: {
                        [key: string]: unknown;
                    };
                    /** @description {"key": "{{input.<field>}}…", "window_s": 1–3600}: one caller's queries with the same rendered key within the window collapse into one run, started at its end with the latest input */
                    debounce?: {
                        [key: string]: unknown;
                    };
                    /** @description Make it the primary version (default false; the first version always is) */
                    primary?: boolean;
                };
            };
        };
        responses: {
            /** @description Success */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    Deprecation: components["headers"]["Deprecation"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        status: "success";
                        payload: {
                            uid: string;
                            circuit_uid: string;
                            number: number;
                            /** @description The circuit definition (its format: GET /api/v1/definition-schema.json) */
                            definition: {
                                [key: string]: unknown;
                            };
                            is_primary: boolean;
                            is_deprecated: boolean;
                            /** Format: date-time */
                            created_at: string;
                        };
                        notices?: components["schemas"]["Notices"];
                    };
                };
            };
            400: components["responses"]["BadClientData"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["NotAllowed"];
            404: components["responses"]["NotFound"];
            408: components["responses"]["RequestTimeout"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            500: components["responses"]["Internal"];
        };
    };
    DeprecateCircuit: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                circuit_uid: string;
            };
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/json": Record<string, never>;
            };
        };
        responses: {
            /** @description Success */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    Deprecation: components["headers"]["Deprecation"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        status: "success";
                        payload: {
                            uid: string;
                            name: string;
                            description: string;
                            username: string;
                            is_private: boolean;
                            is_protected: boolean;
                            license_type: string | null;
                            user_circuit_metric_uid: string | null;
                            is_deprecated: boolean;
                            star_count: number;
                            adaptor_uid: string;
                            primary_version_uid: string | null;
                            /** Format: date-time */
                            created_at: string;
                            /** Format: date-time */
                            updated_at: string;
                        };
                        notices?: components["schemas"]["Notices"];
                    };
                };
            };
            400: components["responses"]["BadClientData"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["NotAllowed"];
            404: components["responses"]["NotFound"];
            408: components["responses"]["RequestTimeout"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            500: components["responses"]["Internal"];
        };
    };
    GetCircuitStarred: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                username: string;
                circuit_name: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    Deprecation: components["headers"]["Deprecation"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        status: "success";
                        payload: boolean;
                        notices?: components["schemas"]["Notices"];
                    };
                };
            };
            400: components["responses"]["BadClientData"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["NotAllowed"];
            404: components["responses"]["NotFound"];
            500: components["responses"]["Internal"];
        };
    };
    StarCircuit: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                username: string;
                circuit_name: string;
            };
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/json": Record<string, never>;
            };
        };
        responses: {
            /** @description Success */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    Deprecation: components["headers"]["Deprecation"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        status: "success";
                        payload: {
                            starred: boolean;
                            star_count: number;
                        };
                        notices?: components["schemas"]["Notices"];
                    };
                };
            };
            400: components["responses"]["BadClientData"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["NotAllowed"];
            404: components["responses"]["NotFound"];
            408: components["responses"]["RequestTimeout"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            500: components["responses"]["Internal"];
        };
    };
    UnstarCircuit: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                username: string;
                circuit_name: string;
            };
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/json": Record<string, never>;
            };
        };
        responses: {
            /** @description Success */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    Deprecation: components["headers"]["Deprecation"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        status: "success";
                        payload: {
                            starred: boolean;
                            star_count: number;
                        };
                        notices?: components["schemas"]["Notices"];
                    };
                };
            };
            400: components["responses"]["BadClientData"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["NotAllowed"];
            404: components["responses"]["NotFound"];
            408: components["responses"]["RequestTimeout"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            500: components["responses"]["Internal"];
        };
    };
    ListStarredCircuits: {
        parameters: {
            query?: {
                /** @description Items per page (default 50; larger values are capped at 50) */
                limit?: number;
                /** @description 1-based page number (default 1) */
                page?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description One page of results */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    Deprecation: components["headers"]["Deprecation"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        meta: components["schemas"]["PageMeta"];
                        data: {
                            uid: string;
                            name: string;
                            description: string;
                            username: string;
                            is_private: boolean;
                            is_protected: boolean;
                            license_type: string | null;
                            user_circuit_metric_uid: string | null;
                            is_deprecated: boolean;
                            star_count: number;
                            adaptor_uid: string;
                            primary_version_uid: string | null;
                            /** Format: date-time */
                            created_at: string;
                            /** Format: date-time */
                            updated_at: string;
                        }[];
                    };
                };
            };
            400: components["responses"]["BadClientData"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["NotAllowed"];
            404: components["responses"]["NotFound"];
            500: components["responses"]["Internal"];
        };
    };
    PingCircuit: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                username: string;
                circuit_name: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    Deprecation: components["headers"]["Deprecation"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        status: "success";
                        payload: boolean;
                        notices?: components["schemas"]["Notices"];
                    };
                };
            };
            400: components["responses"]["BadClientData"];
            /** @description Unauthorized: An Authorization header was sent but its token is invalid or revoked (no token is needed here) */
            401: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            404: components["responses"]["NotFound"];
            500: components["responses"]["Internal"];
        };
    };
    ListCircuitEmbeds: {
        parameters: {
            query?: {
                /** @description Items per page (default 10; larger values are capped at 100) */
                limit?: number;
                /** @description 1-based page number (default 1) */
                page?: number;
            };
            header?: never;
            path: {
                username: string;
                circuit_name: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description One page of results */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    Deprecation: components["headers"]["Deprecation"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        meta: components["schemas"]["PageMeta"];
                        data: {
                            uid: string;
                            name: string;
                            description: string;
                            username: string;
                            is_private: boolean;
                            is_protected: boolean;
                            license_type: string | null;
                            user_circuit_metric_uid: string | null;
                            is_deprecated: boolean;
                            star_count: number;
                            adaptor_uid: string;
                            primary_version_uid: string | null;
                            /** Format: date-time */
                            created_at: string;
                            /** Format: date-time */
                            updated_at: string;
                        }[];
                    };
                };
            };
            400: components["responses"]["BadClientData"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["NotAllowed"];
            404: components["responses"]["NotFound"];
            500: components["responses"]["Internal"];
        };
    };
    ExplainCircuit: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                username: string;
                circuit_name: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    Deprecation: components["headers"]["Deprecation"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        status: "success";
                        payload: {
                            circuit: {
                                uid: string;
                                name: string;
                                description: string;
                                username: string;
                                is_private: boolean;
                                is_protected: boolean;
                                license_type: string | null;
                                user_circuit_metric_uid: string | null;
                                is_deprecated: boolean;
                                star_count: number;
                                adaptor_uid: string;
                                primary_version_uid: string | null;
                                /** Format: date-time */
                                created_at: string;
                                /** Format: date-time */
                                updated_at: string;
                            };
                            version_uid: string;
                            inputs: {
                                name: string;
                                type: string;
                                required: boolean;
                                description: string;
                            }[];
                            steps: {
                                id: string;
                                kind: string;
                                description: string;
                            }[];
                            text: string;
                        };
                        notices?: components["schemas"]["Notices"];
                    };
                };
            };
            400: components["responses"]["BadClientData"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["NotAllowed"];
            404: components["responses"]["NotFound"];
            500: components["responses"]["Internal"];
        };
    };
    GetCircuitAlias: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                circuit_uid: string;
                name: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    Deprecation: components["headers"]["Deprecation"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        status: "success";
                        payload: {
                            name: string;
                            circuit_uid: string;
                            routes: {
                                version_uid: string;
                                weight: number;
                            }[];
                            /** Format: date-time */
                            updated_at: string;
                        };
                        notices?: components["schemas"]["Notices"];
                    };
                };
            };
            400: components["responses"]["BadClientData"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["NotAllowed"];
            404: components["responses"]["NotFound"];
            500: components["responses"]["Internal"];
        };
    };
    SetCircuitAlias: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                circuit_uid: string;
                name: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @description 1–5 routes to versions of this circuit; whole weights 1–100 that add up to 100 */
                    routes: {
                        /** @description A version of this circuit */
                        version_uid: string;
                        /** @description Share of the queries, in percent */
                        weight: number;
                    }[];
                };
            };
        };
        responses: {
            /** @description Success */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    Deprecation: components["headers"]["Deprecation"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        status: "success";
                        payload: {
                            name: string;
                            circuit_uid: string;
                            routes: {
                                version_uid: string;
                                weight: number;
                            }[];
                            /** Format: date-time */
                            updated_at: string;
                        };
                        notices?: components["schemas"]["Notices"];
                    };
                };
            };
            400: components["responses"]["BadClientData"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["NotAllowed"];
            404: components["responses"]["NotFound"];
            408: components["responses"]["RequestTimeout"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            500: components["responses"]["Internal"];
        };
    };
    DeleteCircuitAlias: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                circuit_uid: string;
                name: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    Deprecation: components["headers"]["Deprecation"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        status: "success";
                        payload: {
                            name: string;
                            circuit_uid: string;
                            routes: {
                                version_uid: string;
                                weight: number;
                            }[];
                            /** Format: date-time */
                            updated_at: string;
                        };
                        notices?: components["schemas"]["Notices"];
                    };
                };
            };
            400: components["responses"]["BadClientData"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["NotAllowed"];
            404: components["responses"]["NotFound"];
            500: components["responses"]["Internal"];
        };
    };
    ListCircuitAliases: {
        parameters: {
            query?: {
                /** @description Items per page (default 10; larger values are capped at 100) */
                limit?: number;
                /** @description 1-based page number (default 1) */
                page?: number;
            };
            header?: never;
            path: {
                circuit_uid: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description One page of results */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    Deprecation: components["headers"]["Deprecation"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        meta: components["schemas"]["PageMeta"];
                        data: {
                            name: string;
                            circuit_uid: string;
                            routes: {
                                version_uid: string;
                                weight: number;
                            }[];
                            /** Format: date-time */
                            updated_at: string;
                        }[];
                    };
                };
            };
            400: components["responses"]["BadClientData"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["NotAllowed"];
            404: components["responses"]["NotFound"];
            500: components["responses"]["Internal"];
        };
    };
    ListCircuitAliasHistory: {
        parameters: {
            query?: {
                /** @description Items per page (default 10; larger values are capped at 100) */
                limit?: number;
                /** @description 1-based page number (default 1) */
                page?: number;
            };
            header?: never;
            path: {
                circuit_uid: string;
                name: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description One page of results */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    Deprecation: components["headers"]["Deprecation"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        meta: components["schemas"]["PageMeta"];
                        data: {
                            routes: {
                                version_uid: string;
                                weight: number;
                            }[];
                            /** Format: date-time */
                            updated_at: string;
                            /** Format: date-time */
                            replaced_at: string;
                        }[];
                    };
                };
            };
            400: components["responses"]["BadClientData"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["NotAllowed"];
            404: components["responses"]["NotFound"];
            500: components["responses"]["Internal"];
        };
    };
    QueryCircuitAdaptor: {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes a retried POST safe: the same caller sending the same key (printable ASCII, at most 255 characters) within 24 hours gets the first answer again and starts no second run. The same key with a different request body is 409 Conflict. */
                "Idempotency-Key"?: components["parameters"]["Idempotency-Key"];
                /** @description RFC 7240 preferences; preferences the route does not know are ignored. */
                Prefer?: components["parameters"]["Prefer"];
            };
            path: {
                adaptor_uid: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    context?: {
                        /** @description The circuit version to run (one of this adaptor's circuit); the primary version when absent */
                        version?: string;
                        /** @description Instead of version: an alias of the circuit; the version is drawn by the alias's weights (from the Idempotency-Key when one is sent). Not with version */
                        alias?: string;
                    };
                    /** @description Key/value pairs matching the version's query schema */
                    input: {
                        [key: string]: unknown;
                    };
                    /** @description Default false; only the circuit owner may set it */
                    is_public?: boolean;
                    /** @description An https URL to POST signed run events to (Standard Webhooks; see the Webhooks section) */
                    webhook?: string;
                    /** @description Which events to POST (default ["completed"]); needs webhook */
                    webhook_events_filter?: ("start" | "step" | "waiting" | "completed")[];
                    /** @description The run ends EXCEPTION DeadlineExceeded this many seconds after it was created, or after its delayed start (default and ceiling RUN_DEADLINE_SECONDS, 600) */
                    deadline_s?: number;
                    /**
                     * @description "bypass": steps with a cache field do not read the step cache for this run; their results are still stored
                     * @enum {string}
                     */
                    cache?: "bypass";
                    /** @description At most 10 tags, each ^[a-z0-9][a-z0-9_.:-]{0,63}$; shown to the owner and filter GET /users/circuit-runs?tag= */
                    tags?: string[];
                    /** @description String values only, at most 4 KiB as JSON; shown to the owner and filter GET /users/circuit-runs?metadata.<key>= */
                    metadata?: {
                        [key: string]: string;
                    };
                    /** @description The most the run may cost: a step whose credit hold would pass it does not start and the run ends EXCEPTION BudgetExceeded (see POST /circuit-adaptors/{uid}/estimate) */
                    max_credits?: number;
                    /**
                     * Format: date-time
                     * @description Start the run at this ISO 8601 instant (with its offset), at most a year ahead, instead of at once: it is created now (its credit held) and stays PROVISIONED until then. Not with delay_s
                     */
                    start_at?: string;
                    /** @description Start the run this many seconds from now (at most 31536000, a year) instead of at once. Not with start_at */
                    delay_s?: number;
                    /** @description 0–9, default 5: among your runs waiting for a slot (USER_MAX_CONCURRENT_RUNS, a worker's share), higher priorities are claimed first; it never moves your runs ahead of another user's */
                    priority?: number;
                };
            };
        };
        responses: {
            /** @description Success */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    Deprecation: components["headers"]["Deprecation"];
                    "Preference-Applied": components["headers"]["Preference-Applied"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        status: "success";
                        payload: {
                            uid: string;
                            /** @enum {string} */
                            state: "PROVISIONED" | "RUNNING" | "COMPLETED" | "EXCEPTION";
                            is_public: boolean;
                            user_uid?: string;
                            circuit_uid?: string;
                            circuit_version_uid?: string;
                            alias?: string;
                            replay_of?: string;
                            tags?: string[];
                            /** @description Any JSON value */
                            metadata?: unknown;
                            batch_uid?: string;
                            priority?: number;
                            /** Format: date-time */
                            created_at?: string;
                            /** Format: date-time */
                            ended_at?: string;
                            /** Format: date-time */
                            start_at?: string;
                            document_type?: string;
                            result_blob?: components["schemas"]["RunResult"];
                            /** @description Values of the circuit's metric configuration ({name: value}) */
                            metrics?: {
                                [key: string]: unknown;
                            };
                            error?: {
                                /** @enum {string} */
                                code: "StepFailed" | "InsufficientCredits" | "Canceled" | "DeadlineExceeded" | "WorkerLost" | "Rejected" | "ApprovalTimedOut" | "WaitTimedOut" | "OutputContractViolation" | "AgentTurnLimit" | "BudgetExceeded" | "Internal";
                                message: string;
                                step_id: string | null;
                            };
                            waiting_for?: {
                                step_id: string;
                                kind: string;
                                prompt?: string;
                                /** @description Any JSON value */
                                schema?: unknown;
                                /** Format: date-time */
                                expires_at: string | null;
                                callback_url?: string;
                                decision_url?: string;
                            }[];
                        };
                        notices?: components["schemas"]["Notices"];
                    };
                };
            };
            /** @description BadClientData: Invalid payload, parameter or definition */
            400: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "Preference-Applied": components["headers"]["Preference-Applied"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unauthorized: Missing or invalid bearer token */
            401: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "Preference-Applied": components["headers"]["Preference-Applied"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description InsufficientCredits: The balance cannot cover the base credit of a run */
            402: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "Preference-Applied": components["headers"]["Preference-Applied"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description NotAllowed: The token is valid but not allowed to do this */
            403: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "Preference-Applied": components["headers"]["Preference-Applied"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description NotFound: No such adaptor, context.version of its circuit, or context.alias of its circuit */
            404: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "Preference-Applied": components["headers"]["Preference-Applied"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description RequestTimeout: The request body was not received in full within BODY_TIMEOUT_MS; the connection is closed */
            408: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "Preference-Applied": components["headers"]["Preference-Applied"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description PayloadTooLarge: The request body is over 1 MiB */
            413: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "Preference-Applied": components["headers"]["Preference-Applied"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description UnsupportedMediaType: The request body is not JSON (send Content-Type: application/json) */
            415: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "Preference-Applied": components["headers"]["Preference-Applied"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description IdempotencyKeyReused: The Idempotency-Key was already used by the caller with a different request */
            422: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "Preference-Applied": components["headers"]["Preference-Applied"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description RateLimited: More runs than RUN_RATE_LIMIT_PER_MINUTE from this token in the window, or the token's max_credits_per_day reached (Retry-After: the next UTC day) */
            429: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    "Preference-Applied": components["headers"]["Preference-Applied"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal: Unexpected server error (details are logged, never shown) */
            500: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "Preference-Applied": components["headers"]["Preference-Applied"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    CancelCircuitRun: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                uid: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    Deprecation: components["headers"]["Deprecation"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        status: "success";
                        payload: {
                            uid: string;
                            user_uid: string;
                            circuit_uid: string;
                            circuit_version_uid: string;
                            alias?: string;
                            replay_of?: string;
                            tags?: string[];
                            /** @description Any JSON value */
                            metadata?: unknown;
                            batch_uid?: string;
                            priority?: number;
                            /** Format: date-time */
                            created_at: string;
                            /** Format: date-time */
                            ended_at?: string;
                            /** @enum {string} */
                            state: "PROVISIONED" | "RUNNING" | "COMPLETED" | "EXCEPTION";
                            /** Format: date-time */
                            start_at?: string;
                            is_public: boolean;
                            document_type: string;
                            result_blob?: components["schemas"]["RunResult"];
                            /** @description Values of the circuit's metric configuration ({name: value}) */
                            metrics?: {
                                [key: string]: unknown;
                            };
                            error?: {
                                /** @enum {string} */
                                code: "StepFailed" | "InsufficientCredits" | "Canceled" | "DeadlineExceeded" | "WorkerLost" | "Rejected" | "ApprovalTimedOut" | "WaitTimedOut" | "OutputContractViolation" | "AgentTurnLimit" | "BudgetExceeded" | "Internal";
                                message: string;
                                step_id: string | null;
                            };
                            waiting_for?: {
                                step_id: string;
                                kind: string;
                                prompt?: string;
                                /** @description Any JSON value */
                                schema?: unknown;
                                /** Format: date-time */
                                expires_at: string | null;
                                callback_url?: string;
                                decision_url?: string;
                            }[];
                        };
                        notices?: components["schemas"]["Notices"];
                    };
                };
            };
            400: components["responses"]["BadClientData"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["NotAllowed"];
            404: components["responses"]["NotFound"];
            500: components["responses"]["Internal"];
        };
    };
    ReplayCircuitRun: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                uid: string;
            };
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/json": {
                    /**
                     * @description recorded (default): unchanged requests reuse the original's outputs; live: every step executes
                     * @enum {string}
                     */
                    mode?: "recorded" | "live";
                    /** @description A version of the run's circuit; the original's version when absent */
                    version_uid?: string;
                    /** @description The run's input; the original's when absent */
                    input?: {
                        [key: string]: unknown;
                    };
                };
            };
        };
        responses: {
            /** @description Success */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    Deprecation: components["headers"]["Deprecation"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        status: "success";
                        payload: {
                            uid: string;
                            user_uid: string;
                            circuit_uid: string;
                            circuit_version_uid: string;
                            alias?: string;
                            replay_of?: string;
                            tags?: string[];
                            /** @description Any JSON value */
                            metadata?: unknown;
                            batch_uid?: string;
                            priority?: number;
                            /** Format: date-time */
                            created_at: string;
                            /** Format: date-time */
                            ended_at?: string;
                            /** @enum {string} */
                            state: "PROVISIONED" | "RUNNING" | "COMPLETED" | "EXCEPTION";
                            /** Format: date-time */
                            start_at?: string;
                            is_public: boolean;
                            document_type: string;
                            result_blob?: components["schemas"]["RunResult"];
                            /** @description Values of the circuit's metric configuration ({name: value}) */
                            metrics?: {
                                [key: string]: unknown;
                            };
                            error?: {
                                /** @enum {string} */
                                code: "StepFailed" | "InsufficientCredits" | "Canceled" | "DeadlineExceeded" | "WorkerLost" | "Rejected" | "ApprovalTimedOut" | "WaitTimedOut" | "OutputContractViolation" | "AgentTurnLimit" | "BudgetExceeded" | "Internal";
                                message: string;
                                step_id: string | null;
                            };
                            waiting_for?: {
                                step_id: string;
                                kind: string;
                                prompt?: string;
                                /** @description Any JSON value */
                                schema?: unknown;
                                /** Format: date-time */
                                expires_at: string | null;
                                callback_url?: string;
                                decision_url?: string;
                            }[];
                        };
                        notices?: components["schemas"]["Notices"];
                    };
                };
            };
            /** @description BadClientData: version_uid is a version of another circuit, or input does not match the version's query schema */
            400: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unauthorized: Missing or invalid bearer token */
            401: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description InsufficientCredits: The balance cannot cover the base credit of a run */
            402: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description NotAllowed: The token is valid but not allowed to do this */
            403: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description NotFound: No such run, or no such version_uid */
            404: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description RequestTimeout: The request body was not received in full within BODY_TIMEOUT_MS; the connection is closed */
            408: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict: The run is not terminal (PROVISIONED or RUNNING) */
            409: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description PayloadTooLarge: The request body is over 1 MiB */
            413: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description UnsupportedMediaType: The request body is not JSON (send Content-Type: application/json) */
            415: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description RateLimited: The token started more runs in the last minute than RUN_RATE_LIMIT_PER_MINUTE allows (a replay counts as a run) */
            429: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal: Unexpected server error (details are logged, never shown) */
            500: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    CompareCircuitRuns: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                a: string;
                b: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    Deprecation: components["headers"]["Deprecation"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        status: "success";
                        payload: {
                            output: components["schemas"]["RunComparisonEntry"];
                            steps: {
                                [key: string]: components["schemas"]["RunComparisonEntry"];
                            };
                        };
                        notices?: components["schemas"]["Notices"];
                    };
                };
            };
            400: components["responses"]["BadClientData"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["NotAllowed"];
            404: components["responses"]["NotFound"];
            500: components["responses"]["Internal"];
        };
    };
    ResolveApproval: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                uid: string;
                step_id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @description true goes on with the run; false ends it EXCEPTION Rejected */
                    approved: boolean;
                    /** @description Why, at most 2000 characters */
                    comment?: string;
                    /** @description Anything later steps should read (steps.<id>.output.data): a JSON object of at most 64 KiB */
                    data?: {
                        [key: string]: unknown;
                    };
                };
            };
        };
        responses: {
            /** @description Success */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    Deprecation: components["headers"]["Deprecation"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        status: "success";
                        payload: {
                            uid: string;
                            user_uid: string;
                            circuit_uid: string;
                            circuit_version_uid: string;
                            alias?: string;
                            replay_of?: string;
                            tags?: string[];
                            /** @description Any JSON value */
                            metadata?: unknown;
                            batch_uid?: string;
                            priority?: number;
                            /** Format: date-time */
                            created_at: string;
                            /** Format: date-time */
                            ended_at?: string;
                            /** @enum {string} */
                            state: "PROVISIONED" | "RUNNING" | "COMPLETED" | "EXCEPTION";
                            /** Format: date-time */
                            start_at?: string;
                            is_public: boolean;
                            document_type: string;
                            result_blob?: components["schemas"]["RunResult"];
                            /** @description Values of the circuit's metric configuration ({name: value}) */
                            metrics?: {
                                [key: string]: unknown;
                            };
                            error?: {
                                /** @enum {string} */
                                code: "StepFailed" | "InsufficientCredits" | "Canceled" | "DeadlineExceeded" | "WorkerLost" | "Rejected" | "ApprovalTimedOut" | "WaitTimedOut" | "OutputContractViolation" | "AgentTurnLimit" | "BudgetExceeded" | "Internal";
                                message: string;
                                step_id: string | null;
                            };
                            waiting_for?: {
                                step_id: string;
                                kind: string;
                                prompt?: string;
                                /** @description Any JSON value */
                                schema?: unknown;
                                /** Format: date-time */
                                expires_at: string | null;
                                callback_url?: string;
                                decision_url?: string;
                            }[];
                        };
                        notices?: components["schemas"]["Notices"];
                    };
                };
            };
            400: components["responses"]["BadClientData"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["NotAllowed"];
            404: components["responses"]["NotFound"];
            408: components["responses"]["RequestTimeout"];
            /** @description Conflict: The step is not an approval waiting for a decision (unknown, decided otherwise, expired), or the run is not RUNNING */
            409: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            500: components["responses"]["Internal"];
        };
    };
    SignalCircuitRun: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                uid: string;
                step_id: string;
            };
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/json": {
                    /** @description The signal: any JSON, checked against the step's schema when it has one */
                    data?: unknown;
                };
            };
        };
        responses: {
            /** @description Success */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    Deprecation: components["headers"]["Deprecation"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        status: "success";
                        payload: {
                            uid: string;
                            user_uid: string;
                            circuit_uid: string;
                            circuit_version_uid: string;
                            alias?: string;
                            replay_of?: string;
                            tags?: string[];
                            /** @description Any JSON value */
                            metadata?: unknown;
                            batch_uid?: string;
                            priority?: number;
                            /** Format: date-time */
                            created_at: string;
                            /** Format: date-time */
                            ended_at?: string;
                            /** @enum {string} */
                            state: "PROVISIONED" | "RUNNING" | "COMPLETED" | "EXCEPTION";
                            /** Format: date-time */
                            start_at?: string;
                            is_public: boolean;
                            document_type: string;
                            result_blob?: components["schemas"]["RunResult"];
                            /** @description Values of the circuit's metric configuration ({name: value}) */
                            metrics?: {
                                [key: string]: unknown;
                            };
                            error?: {
                                /** @enum {string} */
                                code: "StepFailed" | "InsufficientCredits" | "Canceled" | "DeadlineExceeded" | "WorkerLost" | "Rejected" | "ApprovalTimedOut" | "WaitTimedOut" | "OutputContractViolation" | "AgentTurnLimit" | "BudgetExceeded" | "Internal";
                                message: string;
                                step_id: string | null;
                            };
                            waiting_for?: {
                                step_id: string;
                                kind: string;
                                prompt?: string;
                                /** @description Any JSON value */
                                schema?: unknown;
                                /** Format: date-time */
                                expires_at: string | null;
                                callback_url?: string;
                                decision_url?: string;
                            }[];
                        };
                        notices?: components["schemas"]["Notices"];
                    };
                };
            };
            /** @description BadClientData: data does not match the step's schema (the step keeps waiting) */
            400: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["NotAllowed"];
            404: components["responses"]["NotFound"];
            408: components["responses"]["RequestTimeout"];
            /** @description Conflict: The step is not a signal wait, already has another signal, no longer waits (timed out), or the run has ended */
            409: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            500: components["responses"]["Internal"];
        };
    };
    GetCircuitRun: {
        parameters: {
            query?: never;
            header?: {
                /** @description RFC 9110 conditional GET: the `ETag` of the copy the client holds (or several, comma-separated, or `*`). When the answer would have that ETag it is 304 Not Modified without a body, so a client polling a run downloads it only when it changed. */
                "If-None-Match"?: components["parameters"]["If-None-Match"];
                /** @description RFC 7240 preferences; preferences the route does not know are ignored. */
                Prefer?: components["parameters"]["Prefer"];
            };
            path: {
                uid: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    Deprecation: components["headers"]["Deprecation"];
                    ETag: components["headers"]["ETag"];
                    "Preference-Applied": components["headers"]["Preference-Applied"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        status: "success";
                        payload: {
                            uid: string;
                            user_uid: string;
                            circuit_uid: string;
                            circuit_version_uid: string;
                            alias?: string;
                            replay_of?: string;
                            tags?: string[];
                            /** @description Any JSON value */
                            metadata?: unknown;
                            batch_uid?: string;
                            priority?: number;
                            /** Format: date-time */
                            created_at: string;
                            /** Format: date-time */
                            ended_at?: string;
                            /** @enum {string} */
                            state: "PROVISIONED" | "RUNNING" | "COMPLETED" | "EXCEPTION";
                            /** Format: date-time */
                            start_at?: string;
                            is_public: boolean;
                            document_type: string;
                            result_blob?: components["schemas"]["RunResult"];
                            /** @description Values of the circuit's metric configuration ({name: value}) */
                            metrics?: {
                                [key: string]: unknown;
                            };
                            error?: {
                                /** @enum {string} */
                                code: "StepFailed" | "InsufficientCredits" | "Canceled" | "DeadlineExceeded" | "WorkerLost" | "Rejected" | "ApprovalTimedOut" | "WaitTimedOut" | "OutputContractViolation" | "AgentTurnLimit" | "BudgetExceeded" | "Internal";
                                message: string;
                                step_id: string | null;
                            };
                            waiting_for?: {
                                step_id: string;
                                kind: string;
                                prompt?: string;
                                /** @description Any JSON value */
                                schema?: unknown;
                                /** Format: date-time */
                                expires_at: string | null;
                                callback_url?: string;
                                decision_url?: string;
                            }[];
                        } | null;
                        notices?: components["schemas"]["Notices"];
                    };
                };
            };
            /** @description Not Modified: the answer has the ETag sent in `If-None-Match`; no body. The request was still authenticated and authorized. */
            304: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    Deprecation: components["headers"]["Deprecation"];
                    ETag: components["headers"]["ETag"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description BadClientData: Invalid payload, parameter or definition */
            400: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    ETag: components["headers"]["ETag"];
                    "Preference-Applied": components["headers"]["Preference-Applied"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unauthorized: Missing or invalid bearer token */
            401: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    ETag: components["headers"]["ETag"];
                    "Preference-Applied": components["headers"]["Preference-Applied"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description NotAllowed: The token is valid but not allowed to do this */
            403: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    ETag: components["headers"]["ETag"];
                    "Preference-Applied": components["headers"]["Preference-Applied"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description NotFound: No such resource (or route) */
            404: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    ETag: components["headers"]["ETag"];
                    "Preference-Applied": components["headers"]["Preference-Applied"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal: Unexpected server error (details are logged, never shown) */
            500: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    ETag: components["headers"]["ETag"];
                    "Preference-Applied": components["headers"]["Preference-Applied"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    ListCircuitVersionRuns: {
        parameters: {
            query?: {
                /** @description Items per page (default 10; larger values are capped at 100) */
                limit?: number;
                /** @description 1-based page number (default 1) */
                page?: number;
            };
            header?: never;
            path: {
                version_uid: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description One page of results */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    Deprecation: components["headers"]["Deprecation"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        meta: components["schemas"]["PageMeta"];
                        data: {
                            uid: string;
                            user_uid: string;
                            circuit_uid: string;
                            circuit_version_uid: string;
                            alias?: string;
                            replay_of?: string;
                            tags?: string[];
                            /** @description Any JSON value */
                            metadata?: unknown;
                            batch_uid?: string;
                            priority?: number;
                            /** Format: date-time */
                            created_at: string;
                            /** Format: date-time */
                            ended_at?: string;
                            /** @enum {string} */
                            state: "PROVISIONED" | "RUNNING" | "COMPLETED" | "EXCEPTION";
                            /** Format: date-time */
                            start_at?: string;
                            is_public: boolean;
                            document_type: string;
                            result_blob?: components["schemas"]["RunResult"];
                            /** @description Values of the circuit's metric configuration ({name: value}) */
                            metrics?: {
                                [key: string]: unknown;
                            };
                            error?: {
                                /** @enum {string} */
                                code: "StepFailed" | "InsufficientCredits" | "Canceled" | "DeadlineExceeded" | "WorkerLost" | "Rejected" | "ApprovalTimedOut" | "WaitTimedOut" | "OutputContractViolation" | "AgentTurnLimit" | "BudgetExceeded" | "Internal";
                                message: string;
                                step_id: string | null;
                            };
                            waiting_for?: {
                                step_id: string;
                                kind: string;
                                prompt?: string;
                                /** @description Any JSON value */
                                schema?: unknown;
                                /** Format: date-time */
                                expires_at: string | null;
                                callback_url?: string;
                                decision_url?: string;
                            }[];
                        }[];
                    };
                };
            };
            400: components["responses"]["BadClientData"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["NotAllowed"];
            404: components["responses"]["NotFound"];
            500: components["responses"]["Internal"];
        };
    };
    ListCircuitRuns: {
        parameters: {
            query?: {
                /** @description Items per page (default 10; larger values are capped at 100) */
                limit?: number;
                /** @description 1-based page number (default 1) */
                page?: number;
            };
            header?: never;
            path: {
                circuit_uid: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description One page of results */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    Deprecation: components["headers"]["Deprecation"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        meta: components["schemas"]["PageMeta"];
                        data: {
                            uid: string;
                            user_uid: string;
                            circuit_uid: string;
                            circuit_version_uid: string;
                            alias?: string;
                            replay_of?: string;
                            tags?: string[];
                            /** @description Any JSON value */
                            metadata?: unknown;
                            batch_uid?: string;
                            priority?: number;
                            /** Format: date-time */
                            created_at: string;
                            /** Format: date-time */
                            ended_at?: string;
                            /** @enum {string} */
                            state: "PROVISIONED" | "RUNNING" | "COMPLETED" | "EXCEPTION";
                            /** Format: date-time */
                            start_at?: string;
                            is_public: boolean;
                            document_type: string;
                            result_blob?: components["schemas"]["RunResult"];
                            /** @description Values of the circuit's metric configuration ({name: value}) */
                            metrics?: {
                                [key: string]: unknown;
                            };
                            error?: {
                                /** @enum {string} */
                                code: "StepFailed" | "InsufficientCredits" | "Canceled" | "DeadlineExceeded" | "WorkerLost" | "Rejected" | "ApprovalTimedOut" | "WaitTimedOut" | "OutputContractViolation" | "AgentTurnLimit" | "BudgetExceeded" | "Internal";
                                message: string;
                                step_id: string | null;
                            };
                            waiting_for?: {
                                step_id: string;
                                kind: string;
                                prompt?: string;
                                /** @description Any JSON value */
                                schema?: unknown;
                                /** Format: date-time */
                                expires_at: string | null;
                                callback_url?: string;
                                decision_url?: string;
                            }[];
                        }[];
                    };
                };
            };
            400: components["responses"]["BadClientData"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["NotAllowed"];
            404: components["responses"]["NotFound"];
            500: components["responses"]["Internal"];
        };
    };
    CreateCircuitRunEventsUrl: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                uid: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    Deprecation: components["headers"]["Deprecation"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        status: "success";
                        payload: {
                            url: string;
                            /** Format: date-time */
                            expires_at: string;
                        };
                        notices?: components["schemas"]["Notices"];
                    };
                };
            };
            400: components["responses"]["BadClientData"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["NotAllowed"];
            404: components["responses"]["NotFound"];
            500: components["responses"]["Internal"];
        };
    };
    StreamCircuitRunEvents: {
        parameters: {
            query?: {
                /** @description Comma-separated kinds: state, step, output (default state) */
                events?: string;
                /** @description Of a signed URL (POST /circuit-runs/{uid}/events/url): its expiry, epoch seconds */
                expires?: string;
                /** @description Of a signed URL: the user it reads as (absent: anonymous) */
                reader?: string;
                /** @description Of a signed URL: instead of a bearer token. Expired: 401; tampered: 403 */
                signature?: string;
            };
            header?: {
                /** @description Server-sent events: the `id:` of the last event the client received; the stream resumes after it (an EventSource sends it when it reconnects). */
                "Last-Event-ID"?: components["parameters"]["Last-Event-ID"];
            };
            path: {
                uid: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A `text/event-stream` (server-sent events). Each event's `data:` is one JSON object: for `event: state`, the same JSON as the payload of the route's GET. Comments (`: keep-alive`) keep the connection open; the stream closes after a terminal state. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    Deprecation: components["headers"]["Deprecation"];
                    [name: string]: unknown;
                };
                content: {
                    "text/event-stream": string;
                };
            };
            /** @description No Content: the `Last-Event-ID` sent names an event after which nothing more will come (the run had already ended); an EventSource stops reconnecting on 204 (HTML Living Standard, server-sent events). */
            204: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["BadClientData"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["NotAllowed"];
            404: components["responses"]["NotFound"];
            500: components["responses"]["Internal"];
        };
    };
    ListMyBoards: {
        parameters: {
            query?: {
                /** @description Items per page (default 10; larger values are capped at 100) */
                limit?: number;
                /** @description 1-based page number (default 1) */
                page?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description One page of results */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    Deprecation: components["headers"]["Deprecation"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        meta: components["schemas"]["PageMeta"];
                        data: {
                            uid: string;
                            name: string;
                            description: string;
                            username: string;
                            is_private: boolean;
                            is_protected: boolean;
                            circuit_count: number;
                            star_count: number;
                            /** Format: date-time */
                            created_at: string;
                            /** Format: date-time */
                            updated_at: string;
                        }[];
                    };
                };
            };
            400: components["responses"]["BadClientData"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["NotAllowed"];
            404: components["responses"]["NotFound"];
            500: components["responses"]["Internal"];
        };
    };
    CreateBoard: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @description Unique per owner */
                    name: string;
                    description?: string;
                    /** @description Default false */
                    is_private?: boolean;
                    /** @description Protected from being copied. Default false */
                    is_protected?: boolean;
                };
            };
        };
        responses: {
            /** @description Success */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    Deprecation: components["headers"]["Deprecation"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        status: "success";
                        payload: {
                            uid: string;
                            name: string;
                            description: string;
                            username: string;
                            is_private: boolean;
                            is_protected: boolean;
                            circuit_count: number;
                            star_count: number;
                            /** Format: date-time */
                            created_at: string;
                            /** Format: date-time */
                            updated_at: string;
                        };
                        notices?: components["schemas"]["Notices"];
                    };
                };
            };
            400: components["responses"]["BadClientData"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["NotAllowed"];
            404: components["responses"]["NotFound"];
            408: components["responses"]["RequestTimeout"];
            /** @description Conflict: The caller already has a board of that name */
            409: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            500: components["responses"]["Internal"];
        };
    };
    GetBoardByName: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                username: string;
                board_name: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    Deprecation: components["headers"]["Deprecation"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        status: "success";
                        payload: {
                            uid: string;
                            name: string;
                            description: string;
                            username: string;
                            is_private: boolean;
                            is_protected: boolean;
                            circuit_count: number;
                            star_count: number;
                            /** Format: date-time */
                            created_at: string;
                            /** Format: date-time */
                            updated_at: string;
                        };
                        notices?: components["schemas"]["Notices"];
                    };
                };
            };
            400: components["responses"]["BadClientData"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["NotAllowed"];
            404: components["responses"]["NotFound"];
            500: components["responses"]["Internal"];
        };
    };
    GetBoard: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                board_uid: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    Deprecation: components["headers"]["Deprecation"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        status: "success";
                        payload: {
                            uid: string;
                            name: string;
                            description: string;
                            username: string;
                            is_private: boolean;
                            is_protected: boolean;
                            circuit_count: number;
                            star_count: number;
                            /** Format: date-time */
                            created_at: string;
                            /** Format: date-time */
                            updated_at: string;
                        };
                        notices?: components["schemas"]["Notices"];
                    };
                };
            };
            400: components["responses"]["BadClientData"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["NotAllowed"];
            404: components["responses"]["NotFound"];
            500: components["responses"]["Internal"];
        };
    };
    UpdateBoard: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                board_uid: string;
            };
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/json": {
                    /** @description Unique per owner */
                    name?: string;
                    description?: string;
                    /** @description Default false */
                    is_private?: boolean;
                    /** @description Protected from being copied. Default false */
                    is_protected?: boolean;
                };
            };
        };
        responses: {
            /** @description Success */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    Deprecation: components["headers"]["Deprecation"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        status: "success";
                        payload: {
                            uid: string;
                            name: string;
                            description: string;
                            username: string;
                            is_private: boolean;
                            is_protected: boolean;
                            circuit_count: number;
                            star_count: number;
                            /** Format: date-time */
                            created_at: string;
                            /** Format: date-time */
                            updated_at: string;
                        };
                        notices?: components["schemas"]["Notices"];
                    };
                };
            };
            400: components["responses"]["BadClientData"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["NotAllowed"];
            404: components["responses"]["NotFound"];
            408: components["responses"]["RequestTimeout"];
            /** @description Conflict: The caller already has a board of that name */
            409: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            500: components["responses"]["Internal"];
        };
    };
    DeleteBoard: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                board_uid: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    Deprecation: components["headers"]["Deprecation"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        status: "success";
                        payload: boolean;
                        notices?: components["schemas"]["Notices"];
                    };
                };
            };
            400: components["responses"]["BadClientData"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["NotAllowed"];
            404: components["responses"]["NotFound"];
            500: components["responses"]["Internal"];
        };
    };
    ListBoardCircuits: {
        parameters: {
            query?: {
                /** @description Items per page (default 10; larger values are capped at 100) */
                limit?: number;
                /** @description 1-based page number (default 1) */
                page?: number;
            };
            header?: never;
            path: {
                board_uid: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description One page of results */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    Deprecation: components["headers"]["Deprecation"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        meta: components["schemas"]["PageMeta"];
                        data: {
                            uid: string;
                            name: string;
                            description: string;
                            username: string;
                            is_private: boolean;
                            is_protected: boolean;
                            license_type: string | null;
                            user_circuit_metric_uid: string | null;
                            is_deprecated: boolean;
                            star_count: number;
                            adaptor_uid: string;
                            primary_version_uid: string | null;
                            /** Format: date-time */
                            created_at: string;
                            /** Format: date-time */
                            updated_at: string;
                        }[];
                    };
                };
            };
            400: components["responses"]["BadClientData"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["NotAllowed"];
            404: components["responses"]["NotFound"];
            500: components["responses"]["Internal"];
        };
    };
    AddCircuitToBoard: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                board_uid: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @description A uid */
                    circuit_uid: string;
                };
            };
        };
        responses: {
            /** @description Success */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    Deprecation: components["headers"]["Deprecation"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        status: "success";
                        payload: {
                            uid: string;
                            name: string;
                            description: string;
                            username: string;
                            is_private: boolean;
                            is_protected: boolean;
                            circuit_count: number;
                            star_count: number;
                            /** Format: date-time */
                            created_at: string;
                            /** Format: date-time */
                            updated_at: string;
                        };
                        notices?: components["schemas"]["Notices"];
                    };
                };
            };
            400: components["responses"]["BadClientData"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["NotAllowed"];
            404: components["responses"]["NotFound"];
            408: components["responses"]["RequestTimeout"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            500: components["responses"]["Internal"];
        };
    };
    RemoveCircuitFromBoard: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                board_uid: string;
                circuit_uid: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    Deprecation: components["headers"]["Deprecation"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        status: "success";
                        payload: {
                            uid: string;
                            name: string;
                            description: string;
                            username: string;
                            is_private: boolean;
                            is_protected: boolean;
                            circuit_count: number;
                            star_count: number;
                            /** Format: date-time */
                            created_at: string;
                            /** Format: date-time */
                            updated_at: string;
                        };
                        notices?: components["schemas"]["Notices"];
                    };
                };
            };
            400: components["responses"]["BadClientData"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["NotAllowed"];
            404: components["responses"]["NotFound"];
            500: components["responses"]["Internal"];
        };
    };
    GetBoardStar: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                username: string;
                board_name: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    Deprecation: components["headers"]["Deprecation"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        status: "success";
                        payload: {
                            user_uid: string;
                            board_uid: string;
                            /** Format: date-time */
                            created_at: string;
                        };
                        notices?: components["schemas"]["Notices"];
                    };
                };
            };
            400: components["responses"]["BadClientData"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["NotAllowed"];
            404: components["responses"]["NotFound"];
            500: components["responses"]["Internal"];
        };
    };
    StarBoard: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                username: string;
                board_name: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    Deprecation: components["headers"]["Deprecation"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        status: "success";
                        payload: {
                            user_uid: string;
                            board_uid: string;
                            /** Format: date-time */
                            created_at: string;
                        };
                        notices?: components["schemas"]["Notices"];
                    };
                };
            };
            400: components["responses"]["BadClientData"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["NotAllowed"];
            404: components["responses"]["NotFound"];
            500: components["responses"]["Internal"];
        };
    };
    UnstarBoard: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                username: string;
                board_name: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    Deprecation: components["headers"]["Deprecation"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        status: "success";
                        payload: boolean;
                        notices?: components["schemas"]["Notices"];
                    };
                };
            };
            400: components["responses"]["BadClientData"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["NotAllowed"];
            404: components["responses"]["NotFound"];
            500: components["responses"]["Internal"];
        };
    };
    PingBoard: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                username: string;
                board_name: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    Deprecation: components["headers"]["Deprecation"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        status: "success";
                        payload: boolean;
                        notices?: components["schemas"]["Notices"];
                    };
                };
            };
            400: components["responses"]["BadClientData"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["NotAllowed"];
            404: components["responses"]["NotFound"];
            500: components["responses"]["Internal"];
        };
    };
    Search: {
        parameters: {
            query: {
                /** @description Query text; every word matches as a prefix */
                search: string;
                /** @description all (default), circuits or users */
                type?: "all" | "circuits" | "users";
                /** @description Items per page (default 10; larger values are capped at 100) */
                limit?: number;
                /** @description 1-based page number (default 1) */
                page?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description One page of results */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    Deprecation: components["headers"]["Deprecation"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        meta: components["schemas"]["PageMeta"];
                        data: {
                            type?: string;
                            uid?: string;
                            name?: string;
                            description?: string;
                            username?: string;
                            bio?: string;
                        }[];
                    };
                };
            };
            /** @description BadClientData: Invalid payload, parameter or definition */
            400: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unauthorized: An Authorization header was sent but its token is invalid or revoked (no token is needed here) */
            401: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description NotFound: No such resource (or route) */
            404: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description RateLimited: Too many searches from this client (the token's user, else the IP); see Retry-After */
            429: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal: Unexpected server error (details are logged, never shown) */
            500: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    GetBlob: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                uid: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    Deprecation: components["headers"]["Deprecation"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        status: "success";
                        payload: {
                            uid: string;
                            blob_type?: string;
                            path?: string;
                            hash: string;
                            user_uid: string;
                            /** Format: date-time */
                            created_at: string;
                            can_delete: boolean;
                            bytes: number;
                            total_reads: number;
                            mime_type: string | null;
                        };
                        notices?: components["schemas"]["Notices"];
                    };
                };
            };
            400: components["responses"]["BadClientData"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["NotAllowed"];
            404: components["responses"]["NotFound"];
            500: components["responses"]["Internal"];
        };
    };
    GetBlobDownloadUrl: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                uid: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Redirect to the target URL */
            302: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    Deprecation: components["headers"]["Deprecation"];
                    /** @description The target URL (a signed, expiring storage URL). */
                    Location: string;
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["BadClientData"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["NotAllowed"];
            404: components["responses"]["NotFound"];
            500: components["responses"]["Internal"];
        };
    };
    GetMe: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    Deprecation: components["headers"]["Deprecation"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        status: "success";
                        payload: {
                            uid: string;
                            username: string;
                            name: string;
                            bio: string;
                            is_private: boolean;
                            is_admin: boolean;
                            credits: number;
                            credits_held: number;
                            /** Format: date-time */
                            created_at: string;
                        };
                        notices?: components["schemas"]["Notices"];
                    };
                };
            };
            400: components["responses"]["BadClientData"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["NotAllowed"];
            404: components["responses"]["NotFound"];
            500: components["responses"]["Internal"];
        };
    };
    ListMyCircuitRuns: {
        parameters: {
            query?: {
                /** @description Only runs in this state */
                state?: "PROVISIONED" | "RUNNING" | "COMPLETED" | "EXCEPTION";
                /** @description Only runs of this circuit */
                circuit_uid?: string;
                /** @description Only runs carrying this tag */
                tag?: string;
                /** @description Only runs created after this instant (RFC 3339) */
                created_after?: string;
                /** @description Only runs created before this instant (RFC 3339) */
                created_before?: string;
                /** @description Only runs of this batch */
                batch_uid?: string;
                /** @description Items per page (default 10; larger values are capped at 100) */
                limit?: number;
                /** @description 1-based page number (default 1) */
                page?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description One page of results */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    Deprecation: components["headers"]["Deprecation"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        meta: components["schemas"]["PageMeta"];
                        data: {
                            uid: string;
                            user_uid: string;
                            circuit_uid: string;
                            circuit_version_uid: string;
                            alias?: string;
                            replay_of?: string;
                            tags?: string[];
                            /** @description Any JSON value */
                            metadata?: unknown;
                            batch_uid?: string;
                            priority?: number;
                            /** Format: date-time */
                            created_at: string;
                            /** Format: date-time */
                            ended_at?: string;
                            /** @enum {string} */
                            state: "PROVISIONED" | "RUNNING" | "COMPLETED" | "EXCEPTION";
                            /** Format: date-time */
                            start_at?: string;
                            is_public: boolean;
                            document_type: string;
                            result_blob?: components["schemas"]["RunResult"];
                            /** @description Values of the circuit's metric configuration ({name: value}) */
                            metrics?: {
                                [key: string]: unknown;
                            };
                            error?: {
                                /** @enum {string} */
                                code: "StepFailed" | "InsufficientCredits" | "Canceled" | "DeadlineExceeded" | "WorkerLost" | "Rejected" | "ApprovalTimedOut" | "WaitTimedOut" | "OutputContractViolation" | "AgentTurnLimit" | "BudgetExceeded" | "Internal";
                                message: string;
                                step_id: string | null;
                            };
                            waiting_for?: {
                                step_id: string;
                                kind: string;
                                prompt?: string;
                                /** @description Any JSON value */
                                schema?: unknown;
                                /** Format: date-time */
                                expires_at: string | null;
                                callback_url?: string;
                                decision_url?: string;
                            }[];
                        }[];
                    };
                };
            };
            400: components["responses"]["BadClientData"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["NotAllowed"];
            404: components["responses"]["NotFound"];
            500: components["responses"]["Internal"];
        };
    };
    CancelMyCircuitRuns: {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes a retried POST safe: the same caller sending the same key (printable ASCII, at most 255 characters) within 24 hours gets the first answer again and starts no second run. The same key with a different request body is 409 Conflict. */
                "Idempotency-Key"?: components["parameters"]["Idempotency-Key"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @description Which of your runs: every condition sent must hold; {} is all your runs. The filters of GET /users/circuit-runs */
                    filter: {
                        /**
                         * @description Only runs in this state
                         * @enum {string}
                         */
                        state?: "PROVISIONED" | "RUNNING" | "COMPLETED" | "EXCEPTION";
                        /**
                         * Format: uuid
                         * @description Only runs of this circuit
                         */
                        circuit_uid?: string;
                        /** @description Only runs carrying this tag */
                        tag?: string;
                        /** @description Only runs whose metadata has every one of these key/value pairs */
                        metadata?: {
                            [key: string]: string;
                        };
                        /**
                         * Format: date-time
                         * @description Only runs created after this instant
                         */
                        created_after?: string;
                        /**
                         * Format: date-time
                         * @description Only runs created before this instant
                         */
                        created_before?: string;
                        /**
                         * Format: uuid
                         * @description Only runs of this batch
                         */
                        batch_uid?: string;
                    };
                };
            };
        };
        responses: {
            /** @description Success */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    Deprecation: components["headers"]["Deprecation"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        status: "success";
                        payload: {
                            matched: number;
                            canceled: number;
                            truncated: boolean;
                        };
                        notices?: components["schemas"]["Notices"];
                    };
                };
            };
            400: components["responses"]["BadClientData"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["NotAllowed"];
            404: components["responses"]["NotFound"];
            408: components["responses"]["RequestTimeout"];
            /** @description Conflict: The first request with this Idempotency-Key is still being processed: retry once it has been answered */
            409: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            /** @description IdempotencyKeyReused: The Idempotency-Key was already used by the caller with a different request */
            422: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            500: components["responses"]["Internal"];
        };
    };
    ReplayMyCircuitRuns: {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes a retried POST safe: the same caller sending the same key (printable ASCII, at most 255 characters) within 24 hours gets the first answer again and starts no second run. The same key with a different request body is 409 Conflict. */
                "Idempotency-Key"?: components["parameters"]["Idempotency-Key"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @description Which of your runs: every condition sent must hold; {} is all your runs. The filters of GET /users/circuit-runs */
                    filter: {
                        /**
                         * @description Only runs in this state
                         * @enum {string}
                         */
                        state?: "PROVISIONED" | "RUNNING" | "COMPLETED" | "EXCEPTION";
                        /**
                         * Format: uuid
                         * @description Only runs of this circuit
                         */
                        circuit_uid?: string;
                        /** @description Only runs carrying this tag */
                        tag?: string;
                        /** @description Only runs whose metadata has every one of these key/value pairs */
                        metadata?: {
                            [key: string]: string;
                        };
                        /**
                         * Format: date-time
                         * @description Only runs created after this instant
                         */
                        created_after?: string;
                        /**
                         * Format: date-time
                         * @description Only runs created before this instant
                         */
                        created_before?: string;
                        /**
                         * Format: uuid
                         * @description Only runs of this batch
                         */
                        batch_uid?: string;
                    };
                    /**
                     * @description recorded (default): unchanged requests reuse the original's outputs; live: every step executes
                     * @enum {string}
                     */
                    mode?: "recorded" | "live";
                };
            };
        };
        responses: {
            /** @description Success */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    Deprecation: components["headers"]["Deprecation"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        status: "success";
                        payload: {
                            matched: number;
                            replayed: number;
                            batch_uid?: string;
                            truncated: boolean;
                        };
                        notices?: components["schemas"]["Notices"];
                    };
                };
            };
            /** @description BadClientData: Invalid payload, parameter or definition */
            400: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unauthorized: Missing or invalid bearer token */
            401: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description NotAllowed: The token lacks runs:write, has a daily credit cap, or the caller may no longer run a circuit of the matched runs */
            403: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description NotFound: No such resource (or route) */
            404: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description RequestTimeout: The request body was not received in full within BODY_TIMEOUT_MS; the connection is closed */
            408: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Conflict: The first request with this Idempotency-Key is still being processed: retry once it has been answered */
            409: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description PayloadTooLarge: The request body is over 1 MiB */
            413: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description UnsupportedMediaType: The request body is not JSON (send Content-Type: application/json) */
            415: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description IdempotencyKeyReused: The Idempotency-Key was already used by the caller with a different request */
            422: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description RateLimited: More runs than RUN_RATE_LIMIT_PER_MINUTE from this token in the window (the call counts as one) */
            429: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal: Unexpected server error (details are logged, never shown) */
            500: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    ListMyCreditLedger: {
        parameters: {
            query?: {
                /** @description Items per page (default 10; larger values are capped at 100) */
                limit?: number;
                /** @description 1-based page number (default 1) */
                page?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description One page of results */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    Deprecation: components["headers"]["Deprecation"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        meta: components["schemas"]["PageMeta"];
                        data: {
                            uid: string;
                            /** @enum {string} */
                            kind: "run" | "grant";
                            run_uid?: string;
                            amount: number;
                            balance_after: number;
                            /** Format: date-time */
                            created_at: string;
                        }[];
                    };
                };
            };
            400: components["responses"]["BadClientData"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["NotAllowed"];
            404: components["responses"]["NotFound"];
            500: components["responses"]["Internal"];
        };
    };
    ListMyApiTokens: {
        parameters: {
            query?: {
                /** @description Items per page (default 10; larger values are capped at 100) */
                limit?: number;
                /** @description 1-based page number (default 1) */
                page?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description One page of results */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    Deprecation: components["headers"]["Deprecation"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        meta: components["schemas"]["PageMeta"];
                        data: {
                            uid: string;
                            label: string;
                            scopes: string[];
                            /** Format: date-time */
                            expires_at: string | null;
                            circuit_uids: string[] | null;
                            max_credits_per_day: number | null;
                            credits_spent_today: number;
                            /** Format: date-time */
                            last_used_at: string | null;
                            /** Format: date-time */
                            created_at: string;
                        }[];
                    };
                };
            };
            400: components["responses"]["BadClientData"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["NotAllowed"];
            404: components["responses"]["NotFound"];
            500: components["responses"]["Internal"];
        };
    };
    CreateApiToken: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/json": {
                    label?: string;
                    /** @description What it may do; every scope when absent */
                    scopes?: ("runs:read" | "runs:write" | "circuits:read" | "circuits:write" | "boards:write" | "webhooks:write" | "schedules:write")[];
                    /**
                     * Format: date-time
                     * @description When it stops working (401 after); never when absent
                     */
                    expires_at?: string;
                    /** @description The only circuits it may run */
                    circuit_uids?: string[];
                    /** @description Credits its runs may take per UTC day (429 RateLimited beyond, until 00:00 UTC) */
                    max_credits_per_day?: number;
                };
            };
        };
        responses: {
            /** @description Success */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    Deprecation: components["headers"]["Deprecation"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        status: "success";
                        payload: {
                            token: string;
                            api_token: {
                                uid: string;
                                label: string;
                                scopes: string[];
                                /** Format: date-time */
                                expires_at: string | null;
                                circuit_uids: string[] | null;
                                max_credits_per_day: number | null;
                                credits_spent_today: number;
                                /** Format: date-time */
                                last_used_at: string | null;
                                /** Format: date-time */
                                created_at: string;
                            };
                        };
                        notices?: components["schemas"]["Notices"];
                    };
                };
            };
            400: components["responses"]["BadClientData"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["NotAllowed"];
            404: components["responses"]["NotFound"];
            408: components["responses"]["RequestTimeout"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            500: components["responses"]["Internal"];
        };
    };
    GetWebhookSecret: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    Deprecation: components["headers"]["Deprecation"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        status: "success";
                        payload: {
                            key: string;
                        };
                        notices?: components["schemas"]["Notices"];
                    };
                };
            };
            400: components["responses"]["BadClientData"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["NotAllowed"];
            404: components["responses"]["NotFound"];
            500: components["responses"]["Internal"];
        };
    };
    ListCircuitRunWebhookDeliveries: {
        parameters: {
            query?: {
                /** @description Items per page (default 10; larger values are capped at 100) */
                limit?: number;
                /** @description 1-based page number (default 1) */
                page?: number;
            };
            header?: never;
            path: {
                uid: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description One page of results */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    Deprecation: components["headers"]["Deprecation"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        meta: components["schemas"]["PageMeta"];
                        data: {
                            webhook_id: string;
                            event: string;
                            step?: string;
                            attempt: number;
                            status_code: number | null;
                            error: string | null;
                            /** Format: date-time */
                            delivered_at: string;
                        }[];
                    };
                };
            };
            400: components["responses"]["BadClientData"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["NotAllowed"];
            404: components["responses"]["NotFound"];
            500: components["responses"]["Internal"];
        };
    };
    ListCircuitSchedules: {
        parameters: {
            query?: {
                /** @description Items per page (default 10; larger values are capped at 100) */
                limit?: number;
                /** @description 1-based page number (default 1) */
                page?: number;
            };
            header?: never;
            path: {
                circuit_uid: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description One page of results */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    Deprecation: components["headers"]["Deprecation"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        meta: components["schemas"]["PageMeta"];
                        data: {
                            uid: string;
                            circuit_uid: string;
                            cron: string;
                            timezone: string;
                            /** @description The input of every run */
                            input: {
                                [key: string]: unknown;
                            };
                            version_uid: string | null;
                            is_public: boolean;
                            is_paused: boolean;
                            /** Format: date-time */
                            next_run_at: string | null;
                            last_run_uid: string | null;
                            last_error: string | null;
                            /** Format: date-time */
                            created_at: string;
                            /** Format: date-time */
                            updated_at: string;
                        }[];
                    };
                };
            };
            400: components["responses"]["BadClientData"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["NotAllowed"];
            404: components["responses"]["NotFound"];
            500: components["responses"]["Internal"];
        };
    };
    CreateCircuitSchedule: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                circuit_uid: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @description Cron expression: 5 fields, or 6 with a leading seconds field; fires at most every 10 s */
                    cron: string;
                    /** @description IANA time zone the cron is read in (default UTC) */
                    timezone?: string;
                    /** @description The input of every run; must match the version's query schema */
                    input: {
                        [key: string]: unknown;
                    };
                    /** @description The version to run; absent or null: the circuit's primary version at each fire */
                    version_uid?: string | null;
                    /** @description Whether its runs are public (default false) */
                    is_public?: boolean;
                };
            };
        };
        responses: {
            /** @description Success */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    Deprecation: components["headers"]["Deprecation"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        status: "success";
                        payload: {
                            uid: string;
                            circuit_uid: string;
                            cron: string;
                            timezone: string;
                            /** @description The input of every run */
                            input: {
                                [key: string]: unknown;
                            };
                            version_uid: string | null;
                            is_public: boolean;
                            is_paused: boolean;
                            /** Format: date-time */
                            next_run_at: string | null;
                            last_run_uid: string | null;
                            last_error: string | null;
                            /** Format: date-time */
                            created_at: string;
                            /** Format: date-time */
                            updated_at: string;
                        };
                        notices?: components["schemas"]["Notices"];
                    };
                };
            };
            400: components["responses"]["BadClientData"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["NotAllowed"];
            404: components["responses"]["NotFound"];
            408: components["responses"]["RequestTimeout"];
            /** @description Conflict: The caller already has the most schedules a user may keep (100) */
            409: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            500: components["responses"]["Internal"];
        };
    };
    GetCircuitSchedule: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                uid: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    Deprecation: components["headers"]["Deprecation"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        status: "success";
                        payload: {
                            uid: string;
                            circuit_uid: string;
                            cron: string;
                            timezone: string;
                            /** @description The input of every run */
                            input: {
                                [key: string]: unknown;
                            };
                            version_uid: string | null;
                            is_public: boolean;
                            is_paused: boolean;
                            /** Format: date-time */
                            next_run_at: string | null;
                            last_run_uid: string | null;
                            last_error: string | null;
                            /** Format: date-time */
                            created_at: string;
                            /** Format: date-time */
                            updated_at: string;
                        } | null;
                        notices?: components["schemas"]["Notices"];
                    };
                };
            };
            400: components["responses"]["BadClientData"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["NotAllowed"];
            404: components["responses"]["NotFound"];
            500: components["responses"]["Internal"];
        };
    };
    UpdateCircuitSchedule: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                uid: string;
            };
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/json": {
                    /** @description Cron expression: 5 fields, or 6 with a leading seconds field; fires at most every 10 s */
                    cron?: string;
                    /** @description IANA time zone the cron is read in (default UTC) */
                    timezone?: string;
                    /** @description The input of every run; must match the version's query schema */
                    input?: {
                        [key: string]: unknown;
                    };
                    /** @description The version to run; null: back to the circuit's primary version at each fire; absent: unchanged */
                    version_uid?: string | null;
                    /** @description Whether its runs are public (default false) */
                    is_public?: boolean;
                    /** @description true pauses (no fires), false resumes */
                    is_paused?: boolean;
                };
            };
        };
        responses: {
            /** @description Success */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    Deprecation: components["headers"]["Deprecation"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        status: "success";
                        payload: {
                            uid: string;
                            circuit_uid: string;
                            cron: string;
                            timezone: string;
                            /** @description The input of every run */
                            input: {
                                [key: string]: unknown;
                            };
                            version_uid: string | null;
                            is_public: boolean;
                            is_paused: boolean;
                            /** Format: date-time */
                            next_run_at: string | null;
                            last_run_uid: string | null;
                            last_error: string | null;
                            /** Format: date-time */
                            created_at: string;
                            /** Format: date-time */
                            updated_at: string;
                        };
                        notices?: components["schemas"]["Notices"];
                    };
                };
            };
            400: components["responses"]["BadClientData"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["NotAllowed"];
            404: components["responses"]["NotFound"];
            408: components["responses"]["RequestTimeout"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            500: components["responses"]["Internal"];
        };
    };
    DeleteCircuitSchedule: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                uid: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    Deprecation: components["headers"]["Deprecation"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        status: "success";
                        payload: boolean;
                        notices?: components["schemas"]["Notices"];
                    };
                };
            };
            400: components["responses"]["BadClientData"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["NotAllowed"];
            404: components["responses"]["NotFound"];
            500: components["responses"]["Internal"];
        };
    };
    CreateCircuitBatch: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                adaptor_uid: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    context?: {
                        /** @description The circuit version to run (one of this adaptor's circuit); the primary version when absent */
                        version?: string;
                        /** @description Instead of version: an alias of the circuit; one version is drawn for the whole batch. Not with version */
                        alias?: string;
                    };
                    /** @description 1–1000 objects, each matching the version's query schema */
                    inputs: {
                        [key: string]: unknown;
                    }[];
                    /** @description Default false; only the circuit owner may set it */
                    is_public?: boolean;
                    /** @description At most 10 tags, each ^[a-z0-9][a-z0-9_.:-]{0,63}$; shown to the owner and filter GET /users/circuit-runs?tag= */
                    tags?: string[];
                    /** @description String values only, at most 4 KiB as JSON; shown to the owner and filter GET /users/circuit-runs?metadata.<key>= */
                    metadata?: {
                        [key: string]: string;
                    };
                    /** @description An https URL to POST signed events of every run to (see the Webhooks section) */
                    webhook?: string;
                    /** @description Which events to POST (default ["completed"]); needs webhook */
                    webhook_events_filter?: ("start" | "step" | "waiting" | "completed")[];
                    /** @description The most each run may cost (EXCEPTION BudgetExceeded past it) */
                    max_credits?: number;
                    /**
                     * Format: date-time
                     * @description Start the run at this ISO 8601 instant (with its offset), at most a year ahead, instead of at once: it is created now (its credit held) and stays PROVISIONED until then. Not with delay_s
                     */
                    start_at?: string;
                    /** @description Start the run this many seconds from now (at most 31536000, a year) instead of at once. Not with start_at */
                    delay_s?: number;
                    /** @description 0–9, default 5: among your runs waiting for a slot (USER_MAX_CONCURRENT_RUNS, a worker's share), higher priorities are claimed first; it never moves your runs ahead of another user's */
                    priority?: number;
                };
            };
        };
        responses: {
            /** @description Success */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    Deprecation: components["headers"]["Deprecation"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        status: "success";
                        payload: {
                            uid: string;
                            circuit_uid?: string;
                            total: number;
                            counts: {
                                PROVISIONED: number;
                                RUNNING: number;
                                COMPLETED: number;
                                EXCEPTION: number;
                            };
                            /** Format: date-time */
                            created_at: string;
                            /** Format: date-time */
                            canceled_at?: string;
                        };
                        notices?: components["schemas"]["Notices"];
                    };
                };
            };
            /** @description BadClientData: Invalid payload, parameter or definition */
            400: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Unauthorized: Missing or invalid bearer token */
            401: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description NotAllowed: The caller may not run the circuit, or the token lacks runs:write, the circuit, or has a daily credit cap */
            403: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description NotFound: No such adaptor, context.version of its circuit, or context.alias of its circuit */
            404: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description RequestTimeout: The request body was not received in full within BODY_TIMEOUT_MS; the connection is closed */
            408: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description PayloadTooLarge: The request body is over 1 MiB */
            413: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description UnsupportedMediaType: The request body is not JSON (send Content-Type: application/json) */
            415: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description RateLimited: More queries than RUN_RATE_LIMIT_PER_MINUTE from this token in the window (a batch counts as one) */
            429: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description Internal: Unexpected server error (details are logged, never shown) */
            500: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                    "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                    "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    EstimateCircuitAdaptor: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                adaptor_uid: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    context?: {
                        /** @description The circuit version (one of this adaptor's circuit); the primary version when absent */
                        version?: string;
                    };
                    /** @description Key/value pairs matching the version's query schema */
                    input: {
                        [key: string]: unknown;
                    };
                };
            };
        };
        responses: {
            /** @description Success */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    Deprecation: components["headers"]["Deprecation"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        status: "success";
                        payload: {
                            min: number;
                            max: number;
                            /** @description Any JSON value */
                            steps: unknown;
                        };
                        notices?: components["schemas"]["Notices"];
                    };
                };
            };
            400: components["responses"]["BadClientData"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["NotAllowed"];
            404: components["responses"]["NotFound"];
            408: components["responses"]["RequestTimeout"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            500: components["responses"]["Internal"];
        };
    };
    GetCircuitBatch: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                uid: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    Deprecation: components["headers"]["Deprecation"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        status: "success";
                        payload: {
                            uid: string;
                            circuit_uid?: string;
                            total: number;
                            counts: {
                                PROVISIONED: number;
                                RUNNING: number;
                                COMPLETED: number;
                                EXCEPTION: number;
                            };
                            /** Format: date-time */
                            created_at: string;
                            /** Format: date-time */
                            canceled_at?: string;
                        };
                        notices?: components["schemas"]["Notices"];
                    };
                };
            };
            400: components["responses"]["BadClientData"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["NotAllowed"];
            404: components["responses"]["NotFound"];
            500: components["responses"]["Internal"];
        };
    };
    ListCircuitBatchRuns: {
        parameters: {
            query?: {
                /** @description Items per page (default 10; larger values are capped at 100) */
                limit?: number;
                /** @description 1-based page number (default 1) */
                page?: number;
            };
            header?: never;
            path: {
                uid: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description One page of results */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    Deprecation: components["headers"]["Deprecation"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        meta: components["schemas"]["PageMeta"];
                        data: {
                            uid: string;
                            user_uid: string;
                            circuit_uid: string;
                            circuit_version_uid: string;
                            alias?: string;
                            replay_of?: string;
                            tags?: string[];
                            /** @description Any JSON value */
                            metadata?: unknown;
                            batch_uid?: string;
                            priority?: number;
                            /** Format: date-time */
                            created_at: string;
                            /** Format: date-time */
                            ended_at?: string;
                            /** @enum {string} */
                            state: "PROVISIONED" | "RUNNING" | "COMPLETED" | "EXCEPTION";
                            /** Format: date-time */
                            start_at?: string;
                            is_public: boolean;
                            document_type: string;
                            result_blob?: components["schemas"]["RunResult"];
                            /** @description Values of the circuit's metric configuration ({name: value}) */
                            metrics?: {
                                [key: string]: unknown;
                            };
                            error?: {
                                /** @enum {string} */
                                code: "StepFailed" | "InsufficientCredits" | "Canceled" | "DeadlineExceeded" | "WorkerLost" | "Rejected" | "ApprovalTimedOut" | "WaitTimedOut" | "OutputContractViolation" | "AgentTurnLimit" | "BudgetExceeded" | "Internal";
                                message: string;
                                step_id: string | null;
                            };
                            waiting_for?: {
                                step_id: string;
                                kind: string;
                                prompt?: string;
                                /** @description Any JSON value */
                                schema?: unknown;
                                /** Format: date-time */
                                expires_at: string | null;
                                callback_url?: string;
                                decision_url?: string;
                            }[];
                        }[];
                    };
                };
            };
            400: components["responses"]["BadClientData"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["NotAllowed"];
            404: components["responses"]["NotFound"];
            500: components["responses"]["Internal"];
        };
    };
    CancelCircuitBatch: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                uid: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    Deprecation: components["headers"]["Deprecation"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        status: "success";
                        payload: {
                            uid: string;
                            circuit_uid?: string;
                            total: number;
                            counts: {
                                PROVISIONED: number;
                                RUNNING: number;
                                COMPLETED: number;
                                EXCEPTION: number;
                            };
                            /** Format: date-time */
                            created_at: string;
                            /** Format: date-time */
                            canceled_at?: string;
                        };
                        notices?: components["schemas"]["Notices"];
                    };
                };
            };
            400: components["responses"]["BadClientData"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["NotAllowed"];
            404: components["responses"]["NotFound"];
            500: components["responses"]["Internal"];
        };
    };
}
