// OSC thread. Remote control and now playing (the book chapter's MPRemoteCommandCenter and
// MPNowPlayingInfoCenter): commands from OSC and from JACK transport drive the now-playing player, and
// its information is published as JACK metadata on our client. See docs/SESSION.md.
import AudioGraph

/// What `/session/nowPlayingInfo` sets (MPNowPlayingInfoCenter's common keys).
struct NowPlayingInfo: Equatable {
    var title = ""
    var artist = ""
    var album = ""
    /// Seconds; nil: read from the node (an audioplayer's duration and position).
    var duration: Double?
    var elapsed: Double?
    var rate: Double?

    static let textKeys = ["title", "artist", "album"]
    static let numberKeys = ["duration", "elapsed", "rate"]
}

extension OSCServiceCore {
    /// The metadata key of a now-playing field on our JACK client.
    static func nowPlayingPropertyKey(_ field: String) -> String { "urn:soundstage:session:nowPlaying:\(field)" }

    /// The node's live figures where the information does not give them.
    private func nowPlayingFigures() -> (duration: Double, elapsed: Double, rate: Double) {
        let info = session.nowPlayingInfo
        guard let node = session.nowPlaying else { return (info.duration ?? 0, info.elapsed ?? 0, info.rate ?? 0) }
        let playing = (try? engine.get(node, "playing"))?.boolValue == true
        let duration = info.duration ?? (try? engine.get(node, "duration"))?.doubleValue ?? 0
        let elapsed = info.elapsed ?? (try? engine.get(node, "currentTime"))?.doubleValue ?? 0
        let rate = info.rate ?? (playing ? (try? engine.get(node, "rate"))?.doubleValue ?? 1 : 0)
        return (duration, elapsed, rate)
    }

    /// `/session/nowPlaying [s:node]`: set the node remote commands drive (a player or audioplayer; ""
    /// for none) → `/done`; get → `/session/nowPlaying s:node s:title s:artist s:album f:duration
    /// f:elapsed f:rate`.
    func sessionNowPlaying(_ r: OSCRequest) throws(OSCFailure) {
        var a = OSCArguments(r)
        if a.isAtEnd {
            let info = session.nowPlayingInfo
            let figures = nowPlayingFigures()
            reply(
                r.client,
                OSCMessage(
                    r.address,
                    [
                        .string(session.nowPlaying ?? ""), .string(info.title), .string(info.artist),
                        .string(info.album), .float(Float(figures.duration)), .float(Float(figures.elapsed)),
                        .float(Float(figures.rate))
                    ]))
            return
        }
        let node = try a.string("node")
        try a.end()
        try setNowPlaying(node.isEmpty ? nil : node)
        done(r.client, r.address)
    }

    /// Sets the now-playing node (nil: none), checking that it is a player or audioplayer.
    func setNowPlaying(_ node: String?) throws(OSCFailure) {
        if let node {
            guard let kind = engine.nodes().first(where: { $0.name == node })?.kind else {
                throw OSCFailure(.badArguments, "/session/nowPlaying: no node '\(OSCText.sanitized(node))'")
            }
            guard kind == .player || kind == .audioplayer else {
                throw OSCFailure(
                    .badArguments, "/session/nowPlaying: '\(node)' is a \(kind.rawValue); a player or audioplayer plays"
                )
            }
        }
        session.nowPlaying = node
        publishNowPlaying()
    }

    /// `/session/nowPlayingInfo s:key v:value …` (title, artist, album: strings; duration, elapsed, rate:
    /// numbers, negative to read them from the node again) → `/done`. All pairs or none apply.
    func sessionNowPlayingInfo(_ r: OSCRequest) throws(OSCFailure) {
        var a = OSCArguments(r)
        var info = session.nowPlayingInfo
        guard !a.isAtEnd else { throw OSCFailure(.badArguments, "\(r.address): give key-value pairs") }
        while !a.isAtEnd {
            let key = try a.string("key")
            switch key {
            case "title": info.title = try a.string("title")
            case "artist": info.artist = try a.string("artist")
            case "album": info.album = try a.string("album")
            case "duration", "elapsed", "rate":
                let value = try a.double(key)
                let figure: Double? = value < 0 ? nil : value
                if key == "duration" {
                    info.duration = figure
                } else if key == "elapsed" {
                    info.elapsed = figure
                } else {
                    info.rate = figure
                }
            default:
                throw OSCFailure(
                    .badArguments,
                    "\(r.address): no key '\(OSCText.sanitized(key))' (keys: title, artist, album, duration, elapsed, rate)"
                )
            }
        }
        session.nowPlayingInfo = info
        publishNowPlaying()
        done(r.client, r.address)
    }

    /// Publishes the now-playing node and information as metadata on our client.
    func publishNowPlaying() {
        let info = session.nowPlayingInfo
        let figures = nowPlayingFigures()
        var properties: [String: String] = [:]
        guard let node = session.nowPlaying else {
            session.nowPlayingProperties = [:]
            publishSession()
            return
        }
        properties[Self.nowPlayingPropertyKey("node")] = node
        properties[Self.nowPlayingPropertyKey("title")] = info.title
        properties[Self.nowPlayingPropertyKey("artist")] = info.artist
        properties[Self.nowPlayingPropertyKey("album")] = info.album
        properties[Self.nowPlayingPropertyKey("duration")] = String(figures.duration)
        session.nowPlayingProperties = properties
        publishSession()
    }

    /// `/session/remote s:play|pause|togglePlayPause|stop|nextTrack|previousTrack|seek [f:seconds]` →
    /// `/done`, acting on the now-playing node.
    func sessionRemote(_ r: OSCRequest) throws(OSCFailure) {
        var a = OSCArguments(r)
        let command = try a.string("command")
        let seconds = command == "seek" ? try a.double("seconds") : nil
        try a.end()
        try remote(command, seconds: seconds, address: r.address)
        done(r.client, r.address)
    }

    /// Applies one remote command to the now-playing node.
    func remote(_ command: String, seconds: Double?, address: String) throws(OSCFailure) {
        guard let node = session.nowPlaying else {
            throw OSCFailure(.notAllowed, "\(address): no now-playing node (set /session/nowPlaying first)")
        }
        let isAudioPlayer = engine.nodes().first { $0.name == node }?.kind == .audioplayer
        let playing = (try? engine.get(node, "playing"))?.boolValue == true
        switch command {
        case "play": try engineCall { () throws(EngineError) in try engine.play(node) }
        case "pause": try engineCall { () throws(EngineError) in try engine.pause(node) }
        case "togglePlayPause":
            try engineCall { () throws(EngineError) in playing ? try engine.pause(node) : try engine.play(node) }
        case "stop": try engineCall { () throws(EngineError) in try engine.stop(node) }
        case "previousTrack", "nextTrack", "seek":
            guard isAudioPlayer else {
                throw OSCFailure(.notAllowed, "\(address): \(command) needs an audioplayer as the now-playing node")
            }
            let duration = (try? engine.get(node, "duration"))?.doubleValue ?? 0
            // One file is one track: previous goes to its start, next to its end (it finishes).
            let target = command == "seek" ? seconds ?? 0 : command == "previousTrack" ? 0 : duration
            guard target >= 0 else { throw OSCFailure(.badArguments, "\(address): seconds must be at least 0") }
            try engineCall { () throws(EngineError) in
                try engine.set(node, "currentTime", to: .float(min(target, duration)))
            }
        default:
            throw OSCFailure(
                .badArguments,
                "\(address): no command '\(OSCText.sanitized(command))' (play, pause, togglePlayPause, stop, nextTrack, "
                    + "previousTrack, seek)")
        }
        notify(OSCMessage("/session/remote_command", [.string(command)] + (seconds.map { [.float(Float($0))] } ?? [])))
    }

    /// JACK transport moved: start → play, stop → pause, a locate → seek (an audioplayer).
    func transportChanged(rolling: Bool, locatedSeconds: Double?) {
        guard session.nowPlaying != nil else { return }
        // Stopping pauses before the seek, so the player rests exactly where the transport was located
        // (seeking first would let it play on for the cycles between the two).
        if !rolling { try? remote("pause", seconds: nil, address: "/session/remote") }
        if let seconds = locatedSeconds { try? remote("seek", seconds: seconds, address: "/session/remote") }
        if rolling { try? remote("play", seconds: nil, address: "/session/remote") }
    }
}
