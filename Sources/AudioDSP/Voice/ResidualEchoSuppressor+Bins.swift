// Render side: the suppressor's per-bin arithmetic, four bins at a time (no allocation, no locks).

extension ResidualEchoSuppressor {
    /// What a hop's gains depend on besides the bins themselves.
    struct HopGain {
        /// The late echo's decay per hop.
        let decay: Float
        /// Over-subtraction of the residual echo estimate.
        let over: Float
        /// The residual echo estimate the gain works against (the floored one in far-end single talk).
        let suppressed: UnsafeMutablePointer<Float>
        /// The noise estimate learns this hop.
        let tracksNoise: Bool
        /// 2 with noise suppression, 0 without.
        let noiseWeight: Float
        /// Smoothing of the a-priori SNR (decision-directed).
        let priorSmoothing: Float
        /// The gain's floor against the residual echo.
        let residualFloor: Float
    }

    /// Bins `k ..< k + Lanes.count` of the error's spectrum, and the error's and the echo estimate's power.
    @inline(__always)
    func powers<Lanes: VoiceLaneCount>(
        at k: Int, _: Lanes.Type
    ) -> (errorRe: VoiceLanes.Lanes, errorIm: VoiceLanes.Lanes, error: VoiceLanes.Lanes, echo: VoiceLanes.Lanes) {
        let c = Lanes.count
        let eRe = VoiceLanes.load(errorRe + k, count: c)
        let eIm = VoiceLanes.load(errorIm + k, count: c)
        let yRe = VoiceLanes.load(echoRe + k, count: c)
        let yIm = VoiceLanes.load(echoIm + k, count: c)
        return (eRe, eIm, eRe * eRe + eIm * eIm, yRe * yRe + yIm * yIm)
    }

    /// The residual echo estimate of bins `k ..< k + Lanes.count` into `estimates` and
    /// `flooredEstimates`; adds their excess over the interference, and the interference, to the sums.
    @inline(__always)
    func estimateBins<Lanes: VoiceLaneCount>(
        at k: Int, _: Lanes.Type, total: Float, referencePeak: UnsafePointer<Float>, referenceWeight: Float,
        excess: inout Float, interference: inout Float
    ) {
        typealias L = VoiceLanes
        let c = Lanes.count
        let (_, _, pe, py) = powers(at: k, Lanes.self)
        let peak = L.load(referencePeak + k, count: c)
        // `late` excludes this hop.
        let late = L.load(state + 6 * binCount + k, count: c)
        let lateFactor = L.load(state + 19 * binCount + k, count: c)
        let couplingFactor = L.load(state + 20 * binCount + k, count: c)
        let spreadFactor = L.load(state + 21 * binCount + k, count: c)
        let others = L.max(
            L.max(lateFactor * late, couplingFactor * peak), L.max(spreadFactor * total, referenceWeight * peak))
        let floored = L.max(L.load(state + 18 * binCount + k, count: c) * py, others)
        let echoEstimate =
            nearEndOwnLeakage ? L.max(L.load(state + 22 * binCount + k, count: c) * py, others) : floored
        L.store(echoEstimate, estimates + k, count: c)
        L.store(floored, flooredEstimates + k, count: c)
        let noise = L.load(state + 4 * binCount + k, count: c)
        L.add(L.max(L.Lanes(repeating: 0), pe - 2 * echoEstimate - 2 * noise), to: &excess, count: c)
        L.add(echoEstimate + noise, to: &interference, count: c)
    }

    /// Bins `k ..< k + Lanes.count`: the late echo, the noise estimate, and the gain applied to the
    /// error's spectrum; adds the bins' input, output, noise, echo and excess powers to `sums`.
    @inline(__always)
    func applyGain<Lanes: VoiceLaneCount>(
        at k: Int, _: Lanes.Type, _ g: HopGain,
        sums: inout (input: Float, output: Float, noise: Float, echo: Float, excess: Float)
    ) {
        typealias L = VoiceLanes
        let c = Lanes.count
        let zero = L.Lanes(repeating: 0)
        let noisePointer = state + 4 * binCount + k
        let previous = state + 5 * binCount + k
        let late = state + 6 * binCount + k
        let (eRe, eIm, pe, py) = powers(at: k, Lanes.self)
        // The late echo: what the echo estimate leaves behind, decaying.
        L.store(g.decay * (L.load(late, count: c) + py), late, count: c)
        let echoEstimate = L.load(estimates + k, count: c)
        let residual = g.over * L.load(g.suppressed + k, count: c)
        // Noise: minimum tracking on the error's smoothed power (about 3 dB below its mean on a steady
        // noise, which the gain's 2 × makes up). A bin without an estimate takes the first power it sees.
        let noise: L.Lanes
        if g.tracksNoise {
            let smoothedPointer = state + 26 * binCount + k
            let minimumPointer = state + 27 * binCount + k
            let before = L.load(smoothedPointer, count: c)
            let smoothed = pe.replacing(with: before + noiseSmoothing * (pe - before), where: before .> 0)
            L.store(smoothed, smoothedPointer, count: c)
            let minimum = L.load(minimumPointer, count: c)
            noise = (minimum * noiseRise).replacing(with: smoothed, where: minimum .<= 0 .| smoothed .< minimum)
            L.store(noise, minimumPointer, count: c)
            L.store(noise, noisePointer, count: c)
        } else {
            noise = L.load(noisePointer, count: c)
        }
        let noiseTerm = g.noiseWeight * noise
        let inverse = 1 / (residual + noiseTerm + 1e-20)
        let posterior = pe * inverse
        let dd = g.priorSmoothing
        let prior = dd * L.load(previous, count: c) + (1 - dd) * L.max(posterior - 1, zero)
        let floor = (g.residualFloor * residual + noiseFloor * noiseTerm + 1e-20) * inverse
        let gain = L.max(prior / (1 + prior), floor)
        L.store(gain * gain * posterior, previous, count: c)
        L.store(eRe * gain, errorRe + k, count: c)
        L.store(eIm * gain, errorIm + k, count: c)
        L.add(pe, to: &sums.input, count: c)
        L.add(pe * gain * gain, to: &sums.output, count: c)
        L.add(noise, to: &sums.noise, count: c)
        L.add(echoEstimate, to: &sums.echo, count: c)
        L.add(L.max(zero, pe - 2 * echoEstimate - 2 * noise), to: &sums.excess, count: c)
    }
}
