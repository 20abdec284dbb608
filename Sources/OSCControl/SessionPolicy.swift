// OSC thread (pure values). The audio session's category, mode and options, the state each Soundstage
// session publishes as JACK metadata on its client, and the rules that decide, from the others' states,
// whether this session is interrupted, ducked or silenced. See docs/SESSION.md.
import Foundation

/// What the session is for (AVAudioSession's categories).
public enum SessionCategory: String, CaseIterable, Sendable {
    case ambient, soloAmbient, playback, record, playAndRecord, multiRoute

    /// The category a session starts with: the one given, else `playAndRecord` for an engine with
    /// capture channels (it records and plays, as it did before sessions), else `soloAmbient`.
    public static func starting(_ given: SessionCategory?, hasInputs: Bool) -> SessionCategory {
        given ?? (hasInputs ? .playAndRecord : .soloAmbient)
    }

    /// Silenced by the rig's silent switch (the two "ambient" categories, as on iOS).
    var isSilencedBySwitch: Bool { self == .ambient || self == .soloAmbient }

    /// Which main JACK ports the category keeps: record has inputs only, the playback categories
    /// outputs only, playAndRecord and multiRoute both.
    public var mainPorts: (outputs: Bool, inputs: Bool) {
        switch self {
        case .ambient, .soloAmbient, .playback: (true, false)
        case .record: (false, true)
        case .playAndRecord, .multiRoute: (true, true)
        }
    }
}

/// What the session's audio is (AVAudioSession's modes).
public enum SessionMode: String, CaseIterable, Sendable {
    case `default`, voiceChat, videoChat, gameChat, measurement, moviePlayback, spokenAudio, videoRecording

    /// The chat modes turn voice processing on.
    var processesVoice: Bool { self == .voiceChat || self == .videoChat || self == .gameChat }
}

/// The category options that decide how sessions share the server.
public struct SessionOptions: Equatable, Sendable {
    public var mixWithOthers = false
    public var duckOthers = false
    public var interruptSpokenAudioAndMixWithOthers = false

    public init(
        mixWithOthers: Bool = false, duckOthers: Bool = false, interruptSpokenAudioAndMixWithOthers: Bool = false
    ) {
        self.mixWithOthers = mixWithOthers
        self.duckOthers = duckOthers
        self.interruptSpokenAudioAndMixWithOthers = interruptSpokenAudioAndMixWithOthers
    }

    static let names = ["mixWithOthers", "duckOthers", "interruptSpokenAudioAndMixWithOthers"]

    /// The set options' names, comma-separated, or `none` (metadata).
    var text: String {
        let set = zip(Self.names, [mixWithOthers, duckOthers, interruptSpokenAudioAndMixWithOthers]).filter(\.1)
        return set.isEmpty ? "none" : set.map(\.0).joined(separator: ",")
    }

    init(text: String) {
        let names = Set(text.split(separator: ",").map(String.init))
        mixWithOthers = names.contains("mixWithOthers")
        duckOthers = names.contains("duckOthers")
        interruptSpokenAudioAndMixWithOthers = names.contains("interruptSpokenAudioAndMixWithOthers")
    }
}

/// One session's state as it publishes it on its JACK client (keys `urn:soundstage:session:<field>`).
public struct SessionPeerState: Equatable, Sendable {
    public var category: SessionCategory = .soloAmbient
    public var mode: SessionMode = .default
    public var options = SessionOptions()
    /// Taking part in the coordination: activated and not deactivated (or interrupted) since.
    public var isActive = false
    /// When it was last activated (nanoseconds of the realtime clock; 0: never). A later activation
    /// interrupts an earlier one.
    public var activation: UInt64 = 0
    /// Its last deactivation told the sessions it interrupted that they may resume.
    public var notifiedOthers = false
    /// The level a ducking session lowers the others to, in dB.
    public var duckLevel = -15.0
    /// The rig's silent switch as this session last set or saw it, and when it was set (0: never).
    public var silentSwitch = false
    public var silentSwitchStamp: UInt64 = 0

    public init() {}

    /// Mixes with the others rather than interrupting them (ambient always; the others with an option
    /// that implies mixing).
    public var isMixable: Bool {
        category == .ambient || options.mixWithOthers || options.duckOthers
            || options.interruptSpokenAudioAndMixWithOthers
    }

    static let keyPrefix = "urn:soundstage:session:"
    /// Written after the other keys: the others read a session's properties as they arrive, one at a
    /// time, and whether it is active is what they act on (a deactivation's notifyOthers must be there
    /// when it reads as inactive).
    static let keysWrittenLast = [keyPrefix + "active"]

    /// The metadata this state is published as.
    var properties: [String: String] {
        let p = Self.keyPrefix
        return [
            p + "category": category.rawValue, p + "mode": mode.rawValue, p + "options": options.text,
            p + "active": isActive ? "1" : "0", p + "activation": String(activation),
            p + "notifyOthers": notifiedOthers ? "1" : "0", p + "duckLevel": String(duckLevel),
            p + "silentSwitch": "\(silentSwitch ? 1 : 0)@\(silentSwitchStamp)"
        ]
    }

    /// Reads a published state; nil when the client publishes no session (not a Soundstage session).
    init?(properties: [String: String]) {
        let p = Self.keyPrefix
        guard let category = properties[p + "category"].flatMap(SessionCategory.init(rawValue:)) else { return nil }
        self.category = category
        mode = properties[p + "mode"].flatMap(SessionMode.init(rawValue:)) ?? .default
        options = SessionOptions(text: properties[p + "options"] ?? "")
        isActive = properties[p + "active"] == "1"
        activation = properties[p + "activation"].flatMap { UInt64($0) } ?? 0
        notifiedOthers = properties[p + "notifyOthers"] == "1"
        duckLevel = properties[p + "duckLevel"].flatMap { Double($0) } ?? -15
        let silent = (properties[p + "silentSwitch"] ?? "0@0").split(separator: "@")
        silentSwitch = silent.first == "1"
        silentSwitchStamp = silent.count > 1 ? UInt64(silent[1]) ?? 0 : 0
    }
}

/// What the other sessions' states mean for this one.
struct SessionVerdict: Equatable {
    /// Sessions that began interrupting this one now (name → their activation).
    var interruptedBy: [String: UInt64] = [:]
    /// Interruptions that ended now: name → whether the interrupting session said to resume.
    var ended: [String: Bool] = [:]
    /// The gain other sessions' ducking asks for (1: none).
    var duckGain: Double = 1
    /// The rig's silent switch (the latest one set anywhere) and when it was set.
    var silentSwitch = false
    var silentSwitchStamp: UInt64 = 0
}

enum SessionPolicy {
    /// Decides from the sessions on the server (`peers`, by client name, ours left out) what happens to
    /// `me`. `seen`: each peer's activation as last decided on (a new one is an activation event);
    /// `current`: the sessions interrupting us now (name → the activation that did it).
    static func decide(
        me: SessionPeerState, peers: [String: SessionPeerState], seen: [String: UInt64],
        current: [String: UInt64]
    ) -> SessionVerdict {
        var verdict = SessionVerdict(silentSwitch: me.silentSwitch, silentSwitchStamp: me.silentSwitchStamp)
        for (name, peer) in peers.sorted(by: { $0.key < $1.key }) {
            if peer.silentSwitchStamp > verdict.silentSwitchStamp {
                verdict.silentSwitch = peer.silentSwitch
                verdict.silentSwitchStamp = peer.silentSwitchStamp
            }
            if peer.isActive && peer.options.duckOthers {
                verdict.duckGain = min(verdict.duckGain, decibelsToGain(peer.duckLevel))
            }
            // A new activation, later than ours, of a session that does not mix with us.
            let isNew = peer.isActive && peer.activation != seen[name] && peer.activation > me.activation
            if isNew && me.isActive && current[name] == nil && interrupts(peer, me) {
                verdict.interruptedBy[name] = peer.activation
            }
        }
        for (name, activation) in current {
            guard let peer = peers[name] else {
                // Its client closed without saying: nothing tells us to resume.
                verdict.ended[name] = false
                continue
            }
            if !peer.isActive {
                verdict.ended[name] = peer.notifiedOthers
            } else if peer.activation != activation {
                // Activated again: still interrupting (the new activation is remembered by the caller).
                continue
            }
        }
        return verdict
    }

    /// The peers' activations to remember as seen after a decision. An active peer's activation is
    /// seen. An inactive peer's is not yet: a session's properties reach the others one at a time, so a
    /// new activation can be read before the session reads as active, and it must still count as new
    /// then. The activation seen before is kept for it.
    static func seenActivations(
        after peers: [String: SessionPeerState], previous: [String: UInt64]
    ) -> [String: UInt64] {
        var seen: [String: UInt64] = [:]
        for (name, peer) in peers {
            if peer.isActive {
                seen[name] = peer.activation
            } else if let earlier = previous[name] {
                seen[name] = earlier
            }
        }
        return seen
    }

    /// Whether `activating`, on activation, interrupts the active session `other`.
    static func interrupts(_ activating: SessionPeerState, _ other: SessionPeerState) -> Bool {
        if !activating.isMixable && !other.isMixable { return true }
        return activating.options.interruptSpokenAudioAndMixWithOthers && other.mode == .spokenAudio
    }

    static func decibelsToGain(_ decibels: Double) -> Double {
        decibels <= -120 ? 0 : pow(10, decibels / 20)
    }
}
