// Pure. One-line descriptions of the engine's addresses for the OSCQuery namespace (docs/OSC.md has
// the full rows; a test checks every served address has one here).

enum OSCQueryDescriptions {
    /// The exact-match addresses.
    static let routes: [String: String] = [
        "/ping": "Replies /pong with the same arguments.",
        "/status": "Replies the engine's state, rate, period, load, xruns, nodes and JACK names.",
        "/status/memory": "Replies resident and heap memory.",
        "/status/realtime": "Replies whether the render thread runs with real-time scheduling.",
        "/version": "Replies the program's name, version and OSC API version.",
        "/quit": "Stops soundstage run.",
        "/sync": "Replies /synced once every earlier request has taken effect.",
        "/node/new": "Makes a node: s:kind s:name [s:key value]…",
        "/node/free": "Frees nodes: s:name…",
        "/node/list": "Replies /node/info per node.",
        "/node/kinds": "Replies the node kinds /node/new accepts.",
        "/graph/connect": "Connects two node endpoints or JACK ports.",
        "/graph/disconnect": "Disconnects two node endpoints or JACK ports.",
        "/graph/list": "Replies /graph/edge per audio and JACK connection.",
        "/buffer/load": "Loads a file into a named buffer.",
        "/buffer/free": "Frees a buffer.",
        "/buffer/list": "Replies /buffer/info per buffer.",
        "/patch/load": "Loads a patch file (replace or diff).",
        "/patch/save": "Saves the running graph as a patch file.",
        "/notify": "Subscribes (i:1) or unsubscribes (i:0) to notifications.",
        "/renew": "Renews a subscription's lease.",
        "/meters": "Sets the meter feed's interval and nodes.",
        "/sound/play": "Plays a buffer through the sound pool.",
        "/recorder/new": "Makes a recorder of a node into a file.",
        "/recorder/list": "Replies /recorder/info per recorder.",
        "/sched/list": "Replies /sched/info per scheduled bundle.",
        "/sched/cancel": "Cancels scheduled bundles by id.",
        "/clearSched": "Cancels every scheduled bundle.",
        "/session/params": "Replies the session's parameters and values.",
        "/session/interrupt": "Begins or ends the rig's own interruption.",
        "/session/suspend": "Suspends rendering (the outputs play silence).",
        "/session/wakeup": "Ends a suspension.",
        "/session/route": "Replies the ports the main outputs and inputs connect to.",
        "/session/nowPlaying": "Sets or gets the node remote commands and JACK transport drive.",
        "/session/nowPlayingInfo": "Sets the now-playing information.",
        "/session/remote": "Applies a remote command to the now-playing node.",
        "/session/activate": "Activates the session.",
        "/session/deactivate": "Deactivates the session.",
        "/session/overrideOutputPort": "Plays the main outputs to these JACK ports only.",
        "/session/otherAudioPlaying": "Replies whether other audio plays (while monitoring)."
    ]

    /// The session's values (`/session/params`).
    static let sessionValues: [String: String] = [
        "category": "The session's category: what it plays and records, and how it mixes.",
        "mode": "The session's mode (the chat modes turn voice processing on).",
        "mixWithOthers": "Mix with the other sessions instead of interrupting them.",
        "duckOthers": "Lower the other sessions while this one is active.",
        "interruptSpokenAudioAndMixWithOthers": "Interrupt spoken audio and mix with the rest.",
        "duckLevel": "What this session, ducking, lowers the others to.",
        "silentSwitch": "The rig's silent switch (mutes ambient and soloAmbient sessions).",
        "isActive": "Whether the session is active.",
        "monitorOtherAudio": "Listen to the other clients that feed the physical playback ports.",
        "pauseOnRouteLoss": "Pause players when the route is lost.",
        "preferredIOBufferDuration": "The period asked of JACK, in seconds.",
        "preferredSampleRate": "The sample rate asked of JACK."
    ]

    /// A node's methods (besides its parameters).
    static let nodeMethods: [String: String] = [
        "params": "Replies /node/<name>/param per parameter.",
        "play": "Starts or resumes playback [at a time tag or sample time].",
        "pause": "Pauses, keeping the position.",
        "stop": "Stops playback.",
        "prepare": "Queues the material so play starts at once.",
        "power": "Replies average and peak power per channel.",
        "lastRenderTime": "Replies when the last render cycle began: h:sampleTime t:timetag.",
        "playerTime": "Replies the player's timeline at an engine time [h:sampleTime | t:timetag].",
        "fade": "Glides the volume to f:volume over f:seconds.",
        "schedule/buffer": "Makes a buffer the player's material.",
        "schedule/file": "Makes a file the player's material.",
        "enqueue": "Queues a buffer segment to play after the current material.",
        "position": "Moves the source: f:x f:y f:z in metres.",
        "velocity": "The source's velocity for Doppler: f:x f:y f:z in m/s.",
        "direction": "The source's facing direction for its cone: f:x f:y f:z.",
        "listener/position": "Moves the listener: f:x f:y f:z in metres.",
        "listener/orientation": "Turns the listener: f:yaw f:pitch f:roll in degrees.",
        "reset": "Clears the effect's tails."
    ]

    /// OSC type tags of the node methods that take arguments.
    static let nodeMethodTypes: [String: String] = [
        "fade": "ff", "position": "fff", "velocity": "fff", "direction": "fff", "listener/position": "fff",
        "listener/orientation": "fff"
    ]
}
