// The rules sessions sharing a server follow, as pure decisions: who interrupts whom, when an
// interruption ends and whether to resume, what ducking and the silent switch ask for, and the metadata
// round trip each session publishes.
@testable import OSCControl
import Testing

@Suite struct SessionPolicyTests {
    private func state(
        _ category: SessionCategory, active: Bool = true, activation: UInt64 = 0, mode: SessionMode = .default,
        options: SessionOptions = SessionOptions()
    ) -> SessionPeerState {
        var s = SessionPeerState()
        s.category = category
        s.isActive = active
        s.activation = activation
        s.mode = mode
        s.options = options
        return s
    }

    @Test func anActivationReadBeforeTheSessionReadsAsActiveStillInterrupts() {
        // The activating session's properties arrive one at a time: first its new activation while it
        // still reads as inactive, then its being active.
        let me = state(.playback, activation: 100)
        var seen = ["radio": UInt64(50)]
        let first = ["radio": state(.playback, active: false, activation: 200)]
        #expect(SessionPolicy.decide(me: me, peers: first, seen: seen, current: [:]).interruptedBy.isEmpty)
        seen = SessionPolicy.seenActivations(after: first, previous: seen)
        #expect(seen == ["radio": 50])
        let then = ["radio": state(.playback, activation: 200)]
        #expect(SessionPolicy.decide(me: me, peers: then, seen: seen, current: [:]).interruptedBy == ["radio": 200])
        // Once seen active, the same activation is not new again; a session that left is forgotten.
        seen = SessionPolicy.seenActivations(after: then, previous: seen)
        #expect(seen == ["radio": 200])
        #expect(SessionPolicy.decide(me: me, peers: then, seen: seen, current: [:]).interruptedBy.isEmpty)
        #expect(SessionPolicy.seenActivations(after: [:], previous: seen).isEmpty)
    }

    @Test func mixabilityFollowsCategoryAndOptions() {
        #expect(state(.ambient).isMixable)
        #expect(!state(.soloAmbient).isMixable)
        #expect(!state(.playback).isMixable)
        #expect(!state(.record).isMixable)
        #expect(state(.playback, options: SessionOptions(mixWithOthers: true)).isMixable)
        // duckOthers and interruptSpokenAudioAndMixWithOthers imply mixing, as on iOS.
        #expect(state(.playAndRecord, options: SessionOptions(duckOthers: true)).isMixable)
        #expect(state(.multiRoute, options: SessionOptions(interruptSpokenAudioAndMixWithOthers: true)).isMixable)
    }

    @Test func aLaterNonMixableActivationInterruptsAnActiveNonMixableSession() {
        let me = state(.playback, activation: 100)
        let verdict = SessionPolicy.decide(
            me: me, peers: ["radio": state(.soloAmbient, activation: 200)], seen: [:], current: [:])
        #expect(verdict.interruptedBy == ["radio": 200])
        // An earlier activation does not, nor one already decided on, nor a mixable one.
        #expect(
            SessionPolicy.decide(me: me, peers: ["old": state(.playback, activation: 50)], seen: [:], current: [:])
                .interruptedBy.isEmpty)
        #expect(
            SessionPolicy.decide(
                me: me, peers: ["radio": state(.playback, activation: 200)], seen: ["radio": 200], current: [:]
            ).interruptedBy.isEmpty)
        #expect(
            SessionPolicy.decide(me: me, peers: ["amb": state(.ambient, activation: 300)], seen: [:], current: [:])
                .interruptedBy.isEmpty)
        // A mixable session is not interrupted, and neither is one that is not active.
        #expect(
            SessionPolicy.decide(
                me: state(.ambient, activation: 100), peers: ["radio": state(.playback, activation: 200)], seen: [:],
                current: [:]
            ).interruptedBy.isEmpty)
        #expect(
            SessionPolicy.decide(
                me: state(.playback, active: false, activation: 100), peers: ["r": state(.playback, activation: 200)],
                seen: [:], current: [:]
            ).interruptedBy.isEmpty)
    }

    @Test func interruptSpokenAudioInterruptsOnlySpokenAudioSessions() {
        let podcast = state(
            .playback, activation: 100, mode: .spokenAudio, options: SessionOptions(mixWithOthers: true))
        let music = state(.playback, activation: 100, options: SessionOptions(mixWithOthers: true))
        let nav = state(.playback, activation: 200, options: SessionOptions(interruptSpokenAudioAndMixWithOthers: true))
        #expect(
            SessionPolicy.decide(me: podcast, peers: ["nav": nav], seen: [:], current: [:]).interruptedBy == [
                "nav": 200
            ])
        #expect(SessionPolicy.decide(me: music, peers: ["nav": nav], seen: [:], current: [:]).interruptedBy.isEmpty)
    }

    @Test func anInterruptionEndsWithTheInterruptersDeactivation() {
        let me = state(.playback, active: false, activation: 100)
        var radio = state(.playback, active: false, activation: 200)
        radio.notifiedOthers = true
        #expect(
            SessionPolicy.decide(me: me, peers: ["radio": radio], seen: ["radio": 200], current: ["radio": 200]).ended
                == ["radio": true])
        radio.notifiedOthers = false
        #expect(
            SessionPolicy.decide(me: me, peers: ["radio": radio], seen: ["radio": 200], current: ["radio": 200]).ended
                == ["radio": false])
        // Still active: still interrupting. Gone (its client closed): ended, without resuming.
        #expect(
            SessionPolicy.decide(
                me: me, peers: ["radio": state(.playback, activation: 200)], seen: ["radio": 200],
                current: ["radio": 200]
            ).ended.isEmpty)
        #expect(SessionPolicy.decide(me: me, peers: [:], seen: [:], current: ["radio": 200]).ended == ["radio": false])
    }

    @Test func duckingTakesTheLowestActiveDuckLevel() {
        var a = state(.ambient, options: SessionOptions(duckOthers: true))
        a.duckLevel = -15
        var b = state(.playback, options: SessionOptions(duckOthers: true))
        b.duckLevel = -20
        var inactive = state(.playback, active: false, options: SessionOptions(duckOthers: true))
        inactive.duckLevel = -40
        let verdict = SessionPolicy.decide(
            me: state(.playback, active: false), peers: ["a": a, "b": b, "c": inactive], seen: [:], current: [:])
        #expect(abs(verdict.duckGain - 0.1) < 1e-12)
        #expect(
            SessionPolicy.decide(me: state(.playback), peers: ["c": inactive], seen: [:], current: [:]).duckGain == 1)
    }

    @Test func theLatestSilentSwitchWins() {
        var me = state(.ambient)
        me.silentSwitch = true
        me.silentSwitchStamp = 10
        var peer = state(.playback)
        peer.silentSwitch = false
        peer.silentSwitchStamp = 20
        let verdict = SessionPolicy.decide(me: me, peers: ["p": peer], seen: [:], current: [:])
        #expect(!verdict.silentSwitch && verdict.silentSwitchStamp == 20)
        peer.silentSwitchStamp = 5
        #expect(SessionPolicy.decide(me: me, peers: ["p": peer], seen: [:], current: [:]).silentSwitch)
        #expect(SessionCategory.ambient.isSilencedBySwitch && SessionCategory.soloAmbient.isSilencedBySwitch)
        #expect(!SessionCategory.playback.isSilencedBySwitch && !SessionCategory.playAndRecord.isSilencedBySwitch)
    }

    @Test func publishedStateRoundTripsThroughMetadata() throws {
        var s = state(.playAndRecord, activation: 1_795_708_564_763_423_397, mode: .voiceChat)
        s.options = SessionOptions(mixWithOthers: true, duckOthers: true)
        s.duckLevel = -22.5
        s.notifiedOthers = true
        s.silentSwitch = true
        s.silentSwitchStamp = 42
        let back = try #require(SessionPeerState(properties: s.properties))
        #expect(back == s)
        #expect(s.properties.values.allSatisfy { !$0.isEmpty }, "JACK refuses empty metadata values")
        // A client without the category key publishes no session.
        #expect(SessionPeerState(properties: ["urn:soundstage:session:nowPlaying:title": "x"]) == nil)
    }
}
