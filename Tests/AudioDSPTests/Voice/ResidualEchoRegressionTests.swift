import AudioDSP
import DSPTestSupport
import Testing

/// What the residual echo regressions learn from: a talker the detector has not marked must not teach
/// them that the echo is louder, while residual echo that really grew must.
@Suite struct ResidualEchoRegressionTests {
    static let f = 480
    static let learningFrames = 300

    /// A suppressor over 3 s of far-end talk whose error is residual echo 30 dB below the echo estimate
    /// (a linear function of it), then `frames` frames of `after(frame, echo, missed, talker)` with the near end
    /// marked on the frames `marked` holds. Returns the residual echo estimate (`echoPower`) per frame
    /// after the learning.
    func run(
        frames: Int, marked: Range<Int> = 0..<0, limit: Float? = nil, steady: Bool = false,
        after: (_ frame: Int, _ echo: Float, _ missed: Float, _ talker: Float) -> Float
    ) -> [Double] {
        let f = Self.f
        var suppressor = ResidualEchoSuppressor(frameLength: f, sampleRate: 48_000)
        if let limit { suppressor.regressionErrorLimit = limit }
        defer { suppressor.deallocate() }
        let buffers = SuppressorBuffers(frameLength: f, binCount: suppressor.binCount)
        defer { buffers.deallocate() }
        buffers.peak.initialize(repeating: 0, count: suppressor.binCount)
        let total = Self.learningFrames + frames
        var farTalker = SpeechLikeSignal(seed: 31)
        var nearTalker = SpeechLikeSignal(seed: 32)
        let far =
            steady
            ? (0..<(total * f)).map { _ in 0.17 * farTalker.noise() }
            : farTalker.make(count: total * f, sampleRate: 48_000, level: 0.1)
        let near = nearTalker.make(count: total * f, sampleRate: 48_000, level: 0.1)
        var previous: Float = 0
        var estimates: [Double] = []
        for frame in 0..<total {
            let index = frame - Self.learningFrames
            for n in 0..<f {
                let echo = far[frame * f + n]
                // What the filter missed of the echo: a linear function of it (this sample and the last).
                let missed = 0.6 * echo - 0.3 * previous
                previous = echo
                buffers.echo[n] = echo
                buffers.error[n] = index < 0 ? 0.0316 * missed : after(index, echo, missed, near[frame * f + n])
            }
            suppressor.process(
                error: buffers.error, echo: buffers.echo, referencePeak: buffers.peak, referenceWeight: 0,
                farEndActive: true, nearEndActive: marked.contains(index), clearTalker: false,
                noiseSuppression: false, output: buffers.output)
            if index >= 0 { estimates.append(Double(suppressor.echoPower)) }
        }
        return estimates
    }

    /// `changed` over `unchanged` at each frame, in dB.
    func rise(_ changed: [Double], over unchanged: [Double]) -> [Double] {
        zip(changed, unchanged).map { decibels($0 / max($1, 1e-30)) }
    }

    @Test func aTalkerTheDetectorMissesRaisesTheEstimateHalfAsFast() {
        // A steady far end, and a talker at the echo's level (30 dB above the residual echo) from frame
        // 12 on, never marked.
        let onset = 12
        let quiet = run(frames: 20, steady: true) { _, _, missed, _ in 0.0316 * missed }
        func talker(limit: Float?) -> [Double] {
            let frames = run(frames: 20, limit: limit, steady: true) { frame, _, missed, talker in
                frame >= onset ? 0.0316 * missed + talker : 0.0316 * missed
            }
            return Array(rise(frames, over: quiet)[onset...])
        }
        let limited = talker(limit: nil)
        let unlimited = talker(limit: 0)
        print(
            "estimate's rise over the talker's frames: \(limited.map { Int($0) }) dB; without the limit \(unlimited.map { Int($0) }) dB"
        )
        // Measured 1, 4, 6 dB against 4, 8, 10 dB without the limit: the detector has more frames to mark
        // the talker before the estimate hides it.
        #expect(unlimited[1] > 7, "without the limit: \(unlimited[1]) dB after two frames")
        #expect(limited[1] < 5, "two frames: \(limited[1]) dB")
        for i in 0..<3 {
            #expect(limited[i] < unlimited[i] - 2, "frame \(i): \(limited[i]) against \(unlimited[i]) dB")
        }
    }

    @Test func residualEchoThatGrewIsFollowedAsFastAsWithoutTheLimit() {
        // The echo path changed: the residual echo jumps from 30 to 10 dB below the echo estimate, with
        // and without a near-end mark on the frames before (the regressions then learn only what the
        // echo estimate explains, which this is).
        for marked in [0..<0, -10..<0] {
            let quiet = run(frames: 60, marked: marked) { _, _, missed, _ in 0.0316 * missed }
            let limited = rise(run(frames: 60, marked: marked) { _, _, missed, _ in 0.316 * missed }, over: quiet)
            let unlimited = rise(
                run(frames: 60, marked: marked, limit: 0) { _, _, missed, _ in 0.316 * missed }, over: quiet)
            let gap = zip(limited, unlimited).map { abs($0 - $1) }.max() ?? 0
            print(
                "residual grown 20 dB, marks \(marked): \(limited[24]) dB at 0.25 s (without the limit \(unlimited[24])), largest gap \(gap) dB"
            )
            #expect(limited[24] > 15, "0.25 s after: \(limited[24]) dB")
            #expect(gap < 1, "the limit slowed the following by \(gap) dB")
        }
    }
}
