@testable import AudioDSP
import Testing

@Suite struct VoiceFFTTests {
    /// Every size the voice processor uses and the small ones whose stages pair differently (an odd or
    /// even count of stages after the first two): each bin against the DFT's definition, and the inverse
    /// back to the signal.
    @Test(arguments: [4, 8, 16, 32, 64, 128, 512, 1024, 2048, 8192])
    func matchesTheDefinitionAndInverts(size n: Int) {
        let fft = VoiceFFT(size: n)
        defer { fft.deallocate() }
        var signal = SpeechLikeSignal(seed: 5)
        let x = (0..<n).map { _ in signal.noise() }
        let rms = (x.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(n)).squareRoot()
        var re = [Float](repeating: 0, count: n / 2 + 1)
        var im = [Float](repeating: 0, count: n / 2 + 1)
        fft.forward(x, re: &re, im: &im)
        // Rounding grows with log2(n) stages over bins of about sqrt(n)·rms; one wrong twiddle or pairing
        // is off by about sqrt(n)·rms.
        let stages = Double(n.trailingZeroBitCount)
        let tolerance = 2e-6 * Double(n).squareRoot() * stages * rms
        let bins = n <= 128 ? Array(0...(n / 2)) : [0, 1, 2, 3, 5, n / 8 + 1, n / 4 - 1, n / 4, n / 3, n / 2 - 1, n / 2]
        for k in bins {
            var sr = 0.0
            var si = 0.0
            for t in 0..<n {
                let (s, c) = EffectMath.sinCos(-2 * EffectMath.pi * Double((k * t) % n) / Double(n))
                sr += Double(x[t]) * c
                si += Double(x[t]) * s
            }
            #expect(abs(Double(re[k]) - sr) < tolerance, "bin \(k) of \(n): re \(re[k]) against \(sr)")
            #expect(abs(Double(im[k]) - si) < tolerance, "bin \(k) of \(n): im \(im[k]) against \(si)")
        }
        var back = [Float](repeating: 0, count: n)
        fft.inverse(re: re, im: im, &back)
        var worst: Float = 0
        for t in 0..<n { worst = max(worst, abs(back[t] - x[t])) }
        #expect(Double(worst) < 1e-6 * stages * rms * 10, "inverse of \(n) off by \(worst)")
    }
}
