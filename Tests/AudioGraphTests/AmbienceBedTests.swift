// The ambience-bed source mode: each channel of a multichannel source placed around the listener at its
// layout position, turned by the listener and by the source's direction, not moved by its position.
import AudioDSP
@testable import AudioGraph
import DSPTestSupport
import Foundation
import Testing

@Suite struct AmbienceBedTests {
    static let rate = TestEngine.rate

    /// An environment with `layout` (output channels `outputs`) and a looping `channels`-channel player
    /// `bed` in ambienceBed mode whose channel `active` carries a 500 Hz tone (the others silence).
    private func scene(
        layout: String, outputs: Int, channels: Int, active: Int, source: [String: ParameterValue] = [:],
        environment: [String: ParameterValue] = [:]
    ) throws -> Engine {
        let engine = TestEngine.make(outputs: outputs)
        let tone = TestSignal.sine(frequency: 500, sampleRate: Self.rate, frames: 48_000, amplitude: 0.5)
        let silence = [Float](repeating: 0, count: 48_000)
        try engine.addBuffer(
            SampleBuffer(
                name: "b", channels: (0..<channels).map { $0 == active ? tone : silence },
                sampleRate: Self.rate))
        var e = environment
        e["layout"] = .string(layout)
        try engine.attach(.environment, name: "env", parameters: e)
        var p = source
        p["buffer"] = .string("b")
        p["loop"] = .bool(true)
        p["playing"] = .bool(true)
        p["sourceMode"] = .string("ambienceBed")
        try engine.attach(.player, name: "bed", parameters: p)
        try engine.connect("bed", to: "env")
        try engine.connect("env", to: "main")
        return engine
    }

    /// RMS of every output channel after the first 0.1 s.
    private func levels(_ engine: Engine, frames: Int = 9_600) -> [Double] {
        TestEngine.render(engine, frames: frames).map { SignalStats.rms($0[4_800...]) }
    }

    private func loudest(_ levels: [Double]) -> Int { levels.indices.max { levels[$0] < levels[$1] }! }

    /// A quad bed on a quad rig: each bed channel is loudest on its own speaker; with the listener
    /// turned 90° right the bed stays in the world (L is then behind on the left), and with the source
    /// facing right the bed turns with it (L is then front right).
    @Test(arguments: [
        ([String: ParameterValue](), [String: ParameterValue](), [0, 1, 2, 3]),
        (["listenerYaw": .float(90)], [:], [2, 0, 3, 1]),
        ([:], ["directionX": .float(1)], [1, 3, 0, 2])
    ])
    func quadChannelsLandOnTheSpeakersTheirPlaceTurnsTo(
        environment: [String: ParameterValue],
        source: [String: ParameterValue], expected: [Int]
    ) throws {
        for channel in 0..<4 {
            let engine = try scene(
                layout: "quad", outputs: 4, channels: 4, active: channel, source: source,
                environment: environment)
            let l = levels(engine)
            #expect(l[loudest(l)] > 0.05, "bed channel \(channel) is silent: \(l)")
            #expect(loudest(l) == expected[channel], "bed channel \(channel): levels \(l)")
        }
    }

    /// A bed is around the listener, not at the source: moving the source (even far away) changes
    /// nothing, sample for sample — no distance attenuation, no Doppler.
    @Test func theSourcesPositionAndVelocityDoNotMoveTheBed() throws {
        let still = try scene(layout: "stereo", outputs: 2, channels: 2, active: 0)
        let moved = try scene(
            layout: "stereo", outputs: 2, channels: 2, active: 0,
            source: ["positionX": .float(80), "positionZ": .float(60), "velocityX": .float(30)])
        let a = TestEngine.render(still, frames: 9_600)
        let b = TestEngine.render(moved, frames: 9_600)
        #expect(a == b)
        #expect(
            SignalStats.rms(a[0][4_800...]) > SignalStats.rms(a[1][4_800...]) * 1.5,
            "the bed's left channel should be louder on the left: \(SignalStats.rms(a[0][4_800...])), \(SignalStats.rms(a[1][4_800...]))"
        )
    }

    /// A 5.1 bed's LFE channel has no direction: it reaches every speaker of a quad rig equally.
    @Test func theLFEChannelIsOmnidirectional() throws {
        let engine = try scene(layout: "quad", outputs: 4, channels: 6, active: 3)
        let l = levels(engine)
        #expect(l.min()! > 0.01, "LFE silent somewhere: \(l)")
        #expect(l.max()! - l.min()! < 1e-6, "LFE uneven: \(l)")
    }

    /// Turning the listener while the bed plays glides: no click at 60 turns per second.
    @Test func turningTheListenerDoesNotClick() throws {
        let engine = try scene(layout: "stereo", outputs: 2, channels: 2, active: 0)
        let renderer = OfflineRenderer(engine: engine)
        var left: [Float] = []
        for step in 0..<120 {
            try engine.setListenerAngles("env", yaw: Double(step * 6 % 360) - 180, pitch: 0, roll: 0)
            left += renderer.render(frameCount: 800, hostBlockFrames: 800)[0]
        }
        let ratio = ClickDetector.secondDifferenceRatio(left[4_800...], frequency: 500, sampleRate: Self.rate)
        #expect(ratio < 1.5, "second-difference ratio \(ratio)")
    }

    /// Switching a source between point source and ambience bed, and changing its channel count while in
    /// bed mode, keeps working (a new bed for the new count).
    @Test func modeAndChannelCountChangesAreFollowed() throws {
        let engine = try scene(layout: "quad", outputs: 4, channels: 4, active: 1)
        #expect(loudest(levels(engine)) == 1)
        try engine.set("bed", "sourceMode", to: .string("pointSource"))
        let point = levels(engine)
        // Downmixed to one source straight ahead: front left and front right equal.
        #expect(abs(point[0] - point[1]) < 1e-6 && point[0] > 0.01, "\(point)")
        try engine.set("bed", "sourceMode", to: .string("ambienceBed"))
        #expect(loudest(levels(engine)) == 1)
        let tone = TestSignal.sine(frequency: 500, sampleRate: Self.rate, frames: 48_000, amplitude: 0.5)
        let silence = [Float](repeating: 0, count: 48_000)
        // Two channels now: the tone on R (+30°), nearest the quad's front right.
        try engine.addBuffer(SampleBuffer(name: "two", channels: [silence, tone], sampleRate: Self.rate))
        try engine.set("bed", "buffer", to: .string("two"))
        #expect(loudest(levels(engine, frames: 19_200)) == 1)
        engine.poll()
    }
}
