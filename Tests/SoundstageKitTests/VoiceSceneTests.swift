// Echo cancellation measured the way every voice-processing figure is measured (the yardstick in
// ../shared/aec): scenes from its generator, cleaned through the whole patch path (`soundstage render`
// with the microphone and the far end on the processor's ports), scored by its metrics. Voices and texts
// other than the yardstick's defaults, and the echo delay never given to the canceller.
import DSPTestSupport
import Foundation
import Testing

/// A python3 with numpy, scipy and pesq, and the yardstick's scripts (SOUNDSTAGE_AEC_PYTHON is set by
/// scripts/test.sh from scripts/python-aec.sh).
enum EchoYardstick {
    static let folder = Fixtures.root.deletingLastPathComponent().appendingPathComponent("shared/aec")

    static var python: String? {
        let candidates = [ProcessInfo.processInfo.environment["SOUNDSTAGE_AEC_PYTHON"], "/usr/bin/python3"]
        for case let path? in candidates where FileManager.default.isExecutableFile(atPath: path) {
            if let r = try? Fixtures.run(path, ["-c", "import numpy, scipy, pesq"], timeout: 30), r.status == 0 {
                return path
            }
        }
        return nil
    }

    static var isAvailable: Bool {
        FileManager.default.fileExists(atPath: folder.appendingPathComponent("gen_signals.py").path)
            && FileManager.default.isExecutableFile(atPath: "/usr/bin/espeak-ng") && python != nil
    }

    /// One scene: the generator's options, the patch's settings, and the host block the render uses.
    struct Scene: Sendable, CustomTestStringConvertible {
        var name: String
        var rate = 48_000
        var generator: [String] = []
        var referenceChannels = 1
        /// The node's default reference (two channels) with only `vp_ref_1` fed, as a user who patches
        /// one port gets it.
        var defaultReference = false
        /// A second loudspeaker playing another signal (real stereo): the generator's options for its
        /// scene, whose far end goes to `vp_ref_2` and whose echo is added to the microphone.
        var rightLoudspeaker: [String]? = nil
        /// A stereo mix (two correlated reference channels): this scene's far end a and a second
        /// scene's b (the generator's options) play as a + b/2 | a/2 + b through a room each, direct
        /// paths 90 and 95 ms (`Benchmarks/voice-stereo-scene.py --mode mixed`); this scene's talker.
        var mixedWith: [String]? = nil
        var block = 256
        /// ERLE in far-end single talk: 40 dB, or the issue's line for a distorting loudspeaker.
        var farEndTarget = 40.0
        /// The echo path's delay jumps at the start of the last far-end segment: that segment is held to
        /// 30 dB from 2 s after the jump instead of 35 dB after double talk.
        var jumps = false
        /// Targets this scene is known to miss (docs/VOICE.md), checked as known issues: the test says so
        /// the day one of them is met.
        var knownMisses: Set<String> = []
        /// Figures measured within 0.05 of their target (docs/VOICE.md): checked as intermittent known
        /// issues, so neither side of the threshold fails the run while every other figure is held.
        var atThreshold: Set<String> = []
        var testDescription: String { name }
    }

    /// A scene from the yardstick's generator (`options`) at `rate` into the folder `path`.
    static func generate(_ options: [String], rate: Int, into path: String, python: String) throws {
        let run = try Fixtures.run(
            python, [folder.appendingPathComponent("gen_signals.py").path, "--fs", "\(rate)", "--out", path] + options,
            timeout: 300)
        try #require(run.status == 0, "gen_signals.py: \(run.stderr)")
    }

    /// The figures metrics.py reports for `scene`, processed by a voice processor through `render`.
    static func measure(_ scene: Scene, in dir: URL) throws -> [String: Double] {
        let python = try #require(python)
        var base = dir.appendingPathComponent(scene.name).path
        try generate(scene.generator, rate: scene.rate, into: base, python: python)
        if let right = scene.rightLoudspeaker {
            try generate(right, rate: scene.rate, into: base + "-right", python: python)
            // The microphone and the echo get the second loudspeaker's echo; the talker and the noise stay.
            let combine = try Fixtures.run(
                python,
                [
                    "-c",
                    "import numpy as n, sys; from scipy.io import wavfile; a, b = sys.argv[1], sys.argv[2]; "
                        + "f = lambda d, k: n.fromfile(d + '/' + k + '.f32', n.float32); e = f(b, 'echo'); "
                        + "(f(a, 'echo') + e).tofile(a + '/echo.f32'); m = f(a, 'mic') + e; m.tofile(a + '/mic.f32'); "
                        + "wavfile.write(a + '/mic.wav', \(scene.rate), m)", base, base + "-right"
                ], timeout: 60)
            try #require(combine.status == 0, "second loudspeaker: \(combine.stderr)")
        }
        if let second = scene.mixedWith {
            try generate(second, rate: scene.rate, into: base + "-second", python: python)
            let mix = try Fixtures.run(
                python,
                [
                    Fixtures.root.appendingPathComponent("Benchmarks/voice-stereo-scene.py").path, "--mode", "mixed",
                    "--first", base, "--second", base + "-second", "--out", base + "-mix", "--left-ms", "90",
                    "--right-ms", "95", "--seed", "15", "--aec-dir", folder.path
                ], timeout: 300)
            try #require(mix.status == 0, "voice-stereo-scene.py: \(mix.stderr)")
            // The two loudspeakers' signals as files for the ports.
            let wavs = try Fixtures.run(
                python,
                [
                    "-c",
                    "import numpy as n, sys; from scipy.io import wavfile; d = sys.argv[1]; "
                        + "[wavfile.write(d + '/' + k + '.wav', \(scene.rate), n.fromfile(d + '/' + k + '.f32', n.float32)) "
                        + "for k in ('far', 'far_r')]", base + "-mix"
                ], timeout: 60)
            try #require(wavs.status == 0, "stereo mix files: \(wavs.stderr)")
            base += "-mix"
        }
        let patch = try Fixtures.write(
            """
            version: 1
            engine: { sampleRate: \(scene.rate), outputs: 1 }
            nodes:
              - name: vp
                kind: voiceprocessor
                params: { \(scene.defaultReference ? "" : "referenceChannels: \(scene.referenceChannels), ")agc: false }
            connections:
              - { from: vp, to: main }
            """, to: "\(scene.name).yaml", in: dir)
        let processed = base + "-processed.wav"
        var arguments = [
            "render", patch, "--out", processed, "--duration", "42", "--block", "\(scene.block)",
            "--port", "vp_mic_1=\(base)/mic.wav", "--port", "vp_ref_1=\(base)/far.wav"
        ]
        if scene.mixedWith != nil {
            arguments += ["--port", "vp_ref_2=\(base)/far_r.wav"]
        } else if scene.referenceChannels == 2 {
            let right = scene.rightLoudspeaker == nil ? base : base + "-right"
            arguments += ["--port", "vp_ref_2=\(right)/far.wav"]
        }
        let render = try Fixtures.run(Fixtures.executable, arguments, timeout: 600)
        try #require(render.status == 0, "render: \(render.stderr)")
        let metrics = try Fixtures.run(
            python, [folder.appendingPathComponent("metrics.py").path, base, processed], timeout: 300)
        try #require(metrics.status == 0, "metrics.py: \(metrics.stderr)")
        var figures = try scores(metrics.stdout)
        // ERLE over the last far-end segment from its third second (energy mean of the per-second values).
        if let curve = try curve(metrics.stdout, "erle_curve2"), curve.count > 2 {
            let powers = curve.dropFirst(2).map { Foundation.pow(10, -$0 / 10) }
            figures["erle_fe2_from_2s"] = -10 * Foundation.log10(powers.reduce(0, +) / Double(powers.count))
        }
        // The same metrics of a perfect canceller's output: the near talker and the microphone's noise,
        // exactly (the scene's own near.f32 + noise.f32).
        let ideal = base + "-ideal.f32"
        let write = try Fixtures.run(
            python,
            [
                "-c",
                "import numpy as n, sys; d = sys.argv[1]; "
                    + "(n.fromfile(d + '/near.f32', n.float32) + n.fromfile(d + '/noise.f32', n.float32))"
                    + ".astype(n.float32).tofile(sys.argv[2])", base, ideal
            ], timeout: 60)
        try #require(write.status == 0, "ideal output: \(write.stderr)")
        let idealMetrics = try Fixtures.run(
            python, [folder.appendingPathComponent("metrics.py").path, base, ideal], timeout: 300)
        try #require(idealMetrics.status == 0, "metrics.py: \(idealMetrics.stderr)")
        for (key, value) in try scores(idealMetrics.stdout) { figures["ideal_" + key] = value }
        return figures
    }

    /// A list of numbers from metrics.py's JSON line.
    static func curve(_ output: String, _ key: String) throws -> [Double]? {
        let line = try #require(output.split(separator: "\n").last { $0.hasPrefix("{") })
        let json = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] ?? [:]
        return (json[key] as? [Any])?.compactMap { ($0 as? NSNumber)?.doubleValue }
    }

    /// The numbers of metrics.py's JSON line.
    static func scores(_ output: String) throws -> [String: Double] {
        let line = try #require(output.split(separator: "\n").last { $0.hasPrefix("{") })
        let json = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] ?? [:]
        return json.compactMapValues { ($0 as? NSNumber)?.doubleValue }
    }
}

@Suite(
    .requiresTool(
        "the echo yardstick (../shared/aec, espeak-ng, numpy, scipy, pesq)", EchoYardstick.isAvailable,
        "scripts/setup.sh installs espeak-ng; scripts/python-aec.sh makes the python"),
    .serialized)
struct VoiceSceneTests {
    static let otherVoices = ["--far-voice", "en-us", "--near-voice", "de"]
    /// Long enough for the generator's timeline (it repeats each talker to fill 42 s).
    static let otherTexts = [
        "--far-text",
        "Please check the monitor levels before the next take, because the click was a little loud last time. "
            + "When the band comes back from the break we will start with the second song, then the ballad, and "
            + "after that the long instrumental piece that everybody likes so much. Keep the drums out of the "
            + "vocal microphone if you can, and tell me at once when anything sounds strange in your headphones.",
        "--near-text",
        "Ich höre dich gut, aber das Echo von meinem Lautsprecher war vorhin deutlich zu hören. Wir sollten die "
            + "Mikrofone noch einmal prüfen, bevor die Probe weitergeht, und die Pegel für den Gesang ein wenig "
            + "anheben. Danach spielen wir das zweite Lied und die Ballade, und zum Schluss das lange Stück ohne "
            + "Gesang, das alle so gerne mögen."
    ]

    static let scenes: [EchoYardstick.Scene] = [
        .init(
            name: "delay-20ms", generator: ["--delay-ms", "20", "--seed", "3"] + otherVoices + otherTexts),
        // The same far end on both reference channels (a mono source on two loudspeakers): cancelled as
        // one channel.
        .init(
            name: "delay-120ms-stereo-reference", generator: ["--delay-ms", "120", "--seed", "4"] + otherTexts,
            referenceChannels: 2),
        // Real stereo: two loudspeakers 7 ms apart playing different voices and texts; the echo is
        // their sum (SER about 0 dB in double talk). SpeexDSP's two-loudspeaker MDF and its learned copy:
        // PESQ in double talk measures 2.58 (2.49 before the residual echo's regressions were kept from
        // learning the talker, docs/VOICE.md).
        .init(
            name: "two-loudspeakers", generator: ["--delay-ms", "40", "--ser-db", "3", "--seed", "12"] + otherTexts,
            referenceChannels: 2,
            rightLoudspeaker: ["--delay-ms", "47", "--seed", "13", "--far-voice", "en-gb+m1", "--near-voice", "de"]),
        // Two loudspeakers 50 ms apart (40 and 90 ms) playing different voices and texts, the talker
        // about 3 dB under their summed echo in double talk: on the nearer one's delay the filter would
        // cover only the first 100 ms of the farther room; that channel is delayed by the 50 ms instead.
        // A chance peak of the first correlations of double talk once moved the delay line here, and
        // the talker lost 7.7 dB (docs/VOICE.md).
        .init(
            name: "two-loudspeakers-50ms-apart",
            generator: ["--delay-ms", "40", "--seed", "24", "--far-voice", "fr", "--near-voice", "en-us+f2"],
            referenceChannels: 2, rightLoudspeaker: ["--delay-ms", "90", "--seed", "4"] + otherTexts),
        // A stereo mix: two correlated signals on two loudspeakers 5 ms apart, other voices and texts.
        // PESQ in double talk measures 2.98 (2.50 before the reference channels were decorrelated for
        // the two-loudspeaker MDF, docs/VOICE.md).
        .init(
            name: "stereo-mix", generator: ["--delay-ms", "90", "--seed", "16"] + otherTexts, referenceChannels: 2,
            mixedWith: ["--delay-ms", "90", "--seed", "17", "--far-voice", "en-gb+m1", "--near-voice", "de"]),
        // The delay is found only after the first second, which once let the distortion learner read the
        // unconverged filter's echo as distortion.
        .init(
            name: "delay-120ms-16k", rate: 16_000, generator: ["--delay-ms", "120", "--seed", "23"] + otherTexts),
        // A loudspeaker 80 ms away in a live room (RT60 0.3 s), its direct sound 20 dB under its
        // reflections, the talker 5 dB over the echo: the correlation's peak moves among the early
        // reflections, and when each move realigned the line (32 times), the MDF never converged: far-end
        // ERLE 31.5, the talker −3.8 dB and PESQ 1.15 in double talk (docs/VOICE.md).
        .init(
            name: "far-loudspeaker-live-room",
            generator: ["--delay-ms", "80", "--rt60", "0.3", "--drr-db", "-20", "--ser-db", "5", "--seed", "26"]
                + otherTexts),
        .init(
            name: "near-louder-block-1000", generator: ["--delay-ms", "60", "--ser-db", "10", "--seed", "5"],
            block: 1000),
        // SER −10: PESQ measures 2.64 (2.03 before the quiet talker was detected by the error's coherence
        // with the echo, 2.52 before the noise estimate was smoothed, docs/VOICE.md); the near talker
        // −0.65 dB.
        .init(
            name: "near-quieter", generator: ["--delay-ms", "60", "--ser-db", "-10", "--seed", "6"] + otherVoices),
        .init(name: "44k1", rate: 44_100, generator: ["--delay-ms", "60", "--seed", "7"] + otherTexts),
        // The node's default of two reference channels with one port fed (folded onto that channel),
        // a loudspeaker whose distortion is 12 dB below its linear part and an echo found after 1 s.
        .init(
            name: "default-reference-sdr-12", rate: 44_100,
            generator: ["--delay-ms", "130", "--nl-sdr", "12", "--seed", "25", otherTexts[0], otherTexts[1]],
            defaultReference: true, farEndTarget: 35),
        // Both loudspeaker non-linearities of the yardstick: a soft clipper whose distortion is 20 or 6 dB
        // below its linear part, and the hard clip with an asymmetric sigmoid of the Microsoft AEC
        // challenge's synthetic data.
        .init(
            name: "loudspeaker-sdr-20", generator: ["--delay-ms", "35", "--nl-sdr", "20", "--seed", "8"] + otherVoices,
            farEndTarget: 35),
        .init(
            name: "loudspeaker-sdr-6", generator: ["--delay-ms", "60", "--nl-sdr", "6", "--seed", "9"] + otherTexts,
            farEndTarget: 20),
        .init(
            name: "loudspeaker-clipping", generator: ["--delay-ms", "60", "--nl", "1", "--seed", "10"] + otherVoices,
            farEndTarget: 20),
        // The hard clip at 120 ms, where the talker starts while the far end still plays: missed for a
        // quarter of a second, the talker once taught the residual echo's regressions that the echo was
        // 15–20 dB louder than it was (PESQ 2.40, the talker −1.10 dB; docs/VOICE.md).
        .init(
            name: "loudspeaker-clipping-120ms",
            generator: ["--delay-ms", "120", "--nl", "1", "--seed", "4"] + otherTexts,
            farEndTarget: 20),
        // One signal on two loudspeakers 40 ms apart (30 and 70 ms; a mono far end on a stereo pair), one
        // reference channel, 16 kHz. The tracker heads whichever path is louder in each correlation; when
        // the line followed it from one to the other, the filter never settled: far-end ERLE 15 dB, the
        // talker −7 dB in double talk and PESQ 1.07 (docs/VOICE.md).
        .init(
            name: "one-signal-two-loudspeakers-16k", rate: 16_000,
            generator: ["--delay-ms", "30", "--seed", "27"] + otherTexts,
            rightLoudspeaker: ["--delay-ms", "70", "--seed", "28"] + otherTexts),
        .init(
            name: "delay-jump-16k", rate: 16_000,
            generator: ["--delay-ms", "20", "--delay2-ms", "60", "--seed", "11"] + otherVoices + otherTexts,
            jumps: true)
    ]

    typealias Target = (metric: String, description: String, holds: @Sendable (Double, [String: Double]) -> Bool)

    /// The issue's targets for `scene`, by metric: (what metrics.py reports, the test it must pass given
    /// every figure). The near-end level is held to what a perfect canceller scores: the far end's echo
    /// runs into the near-end segment (0.3 s of reverberation after the far end's last word), and
    /// metrics.py counts it in the microphone's level, so removing it reads as a loss (0.85 dB at SER −10).
    static func targets(_ scene: EchoYardstick.Scene) -> [Target] {
        let farEnd = scene.farEndTarget
        let last: Target =
            scene.jumps
            ? ("erle_fe2_from_2s", "ERLE from 2 s after a delay jump ≥ 30 dB", { v, _ in v >= 30 })
            : ("erle_fe2", "ERLE after double talk ≥ 35 dB", { v, _ in v >= 35 })
        var targets: [Target] = []
        if scene.rate == 16_000 {
            targets.append(("erle_0_2s", "ERLE in the first 2 s ≥ 25 dB (16 kHz)", { @Sendable v, _ in v >= 25 }))
        }
        let held: [Target] = [
            ("erle_fe", "ERLE in far-end single talk ≥ \(Int(farEnd)) dB", { v, _ in v >= farEnd }),
            last,
            ("dt_near_gain_db", "near talker in double talk ≥ −1 dB", { v, _ in v >= -1 }),
            (
                "nest_gain_db", "near-end single talk within ±0.5 dB of a perfect canceller's",
                { v, m in abs(v - (m["ideal_nest_gain_db"] ?? 0)) <= 0.5 }
            ),
            ("pesq_dt", "PESQ of the near talker in double talk ≥ 2.5", { v, _ in v >= 2.5 })
        ]
        return targets + held
    }

    @Test(arguments: scenes)
    func farEndEchoIsCancelledAndTheNearTalkerKept(scene: EchoYardstick.Scene) throws {
        let dir = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let m = try EchoYardstick.measure(scene, in: dir)
        let figures = [
            "erle_0_2s", "erle_fe", "erle_fe2", "erle_fe2_from_2s", "dt_near_gain_db", "nest_gain_db", "pesq_dt"
        ].map {
            "\($0) \(m[$0].map { String(format: "%.2f", $0) } ?? "-")"
        }
        print("voice scene \(scene.name): \(figures.joined(separator: ", "))")
        for target in Self.targets(scene) {
            let value = try #require(m[target.metric], "metrics.py reported no \(target.metric)")
            if scene.atThreshold.contains(target.metric) {
                withKnownIssue("\(scene.name): \(target.description), at the threshold", isIntermittent: true) {
                    #expect(target.holds(value, m), "\(scene.name): \(target.metric) = \(value)")
                }
            } else if scene.knownMisses.contains(target.metric) {
                withKnownIssue("\(scene.name): \(target.description) (docs/VOICE.md)") {
                    #expect(target.holds(value, m), "\(scene.name): \(target.metric) = \(value)")
                }
            } else {
                let ideal = m["ideal_" + target.metric] ?? .nan
                #expect(
                    target.holds(value, m),
                    "\(scene.name): \(target.description), measured \(value) (perfect canceller: \(ideal))")
            }
        }
    }
}
