// Control side: init, deallocate. Render side: setFilter, prepare, learn (no allocation, no locks).

/// Learns the loudspeaker's memoryless distortion and puts it into the reference before the linear
/// filter, so that the echo the filter has to model is linear again.
///
/// A memoryless non-linearity followed by the room (a Hammerstein system) makes an echo h ∗ g(x). A
/// linear filter learns h times g's linear part and leaves h ∗ (the rest), which at a loudspeaker
/// distortion 6 dB below the signal is an ERLE of about 7 dB. Here g is modelled as
/// x + Σₖ aₖ·φₖ(x), with the odd x·|x|, x³ and x⁵ and the even |x| and x², each made orthogonal at lag 0
/// to x itself and to a constant over the far end's last seconds (the orthogonalised "power filter"
/// inputs of Kuech and Kellermann, Signal Processing 86(6), 2006), and the reference the linear filter
/// sees is x + Σ aₖ·φₖ(x). The room is not learned a second time: the linear filter's own impulse response ĥ
/// (SpeexDSP's, fetched every few frames) turns each φₖ into zₖ = ĥ ∗ φₖ, what a change of aₖ would add
/// to the echo estimate, and the linear filter's output e is regressed on the five zₖ. Each frame of
/// far-end single talk moves the coefficients a fraction `step` of the way to that frame's
/// least-squares solution, with the zₖ's correlation matrix averaged over `memorySeconds` (a Newton
/// step: the φₖ are strongly correlated with one another, which would stall a plain gradient).
/// Memoryless fits of the yardstick's loudspeakers with these five functions leave the distortion
/// 32–41 dB below the signal (soft clippers at 6 and 20 dB, the hard clip with an asymmetric sigmoid),
/// against 17–36 dB with the first three (docs/DECISIONS.md).
public struct NonlinearEchoCanceller {
    public static let functionCount = 5
    public let frameLength: Int
    /// The linear filter's response, partitioned.
    var convolution: PartitionedConvolution
    public var hasFilter: Bool { convolution.hasFilter }
    var fftSize: Int { convolution.fftSize }
    /// Per function: the last `fftSize` samples, and the spectra of the latest `partitionCount` frames.
    let inputs: UnsafeMutablePointer<Float>
    let spectraRe: UnsafeMutablePointer<Float>
    let spectraIm: UnsafeMutablePointer<Float>
    var spectrumIndex = 0
    /// Per function: this frame's zₖ = ĥ ∗ φₖ.
    let filtered: UnsafeMutablePointer<Float>
    /// Over the far end, for the orthogonalisation: E[x²], and per function E[φₖ·x] and E[φₖ].
    var powerMoment: Float = 0
    let crossMoments: UnsafeMutablePointer<Float>
    let meanMoments: UnsafeMutablePointer<Float>
    /// Per function, this frame's sums of φₖ·x and φₖ (before orthogonalisation).
    let frameCross: UnsafeMutablePointer<Float>
    let frameMean: UnsafeMutablePointer<Float>
    let momentRate: Float
    /// The zₖ's correlation matrix (K × K), summed with forgetting, and the sum of the weights; work
    /// space for the solve.
    let correlation: UnsafeMutablePointer<Double>
    var correlationWeight: Double = 0
    let crossCorrelation: UnsafeMutablePointer<Double>
    let factor: UnsafeMutablePointer<Double>
    let solution: UnsafeMutablePointer<Double>
    let forgetting: Double
    /// The correlation's weight after a quarter of a second of far-end frames.
    let warmUpWeight: Double
    /// The frame `prepare` took, for `learn`'s bound.
    let lastReference: UnsafeMutablePointer<Float>
    public let step: Float
    /// a₀ … a₄.
    let coefficientValues: UnsafeMutablePointer<Float>

    /// - Parameters:
    ///   - filterLength: the linear filter's length in samples (`setFilter` takes that many).
    ///   - step: the fraction of a frame's least-squares solution taken per frame.
    ///   - memorySeconds: over how much far-end audio the correlation matrix is averaged.
    public init(
        frameLength: Int, sampleRate: Double, filterLength: Int, step: Float = 0.01, memorySeconds: Double = 2
    ) {
        precondition(frameLength > 0 && filterLength > 0)
        self.frameLength = frameLength
        self.step = step
        convolution = PartitionedConvolution(frameLength: frameLength, filterLength: filterLength)
        let size = convolution.fftSize
        let spectra = convolution.partitionCount * convolution.binCount
        let k = Self.functionCount
        inputs = .allocate(capacity: k * size)
        inputs.initialize(repeating: 0, count: k * size)
        spectraRe = .allocate(capacity: k * spectra)
        spectraRe.initialize(repeating: 0, count: k * spectra)
        spectraIm = .allocate(capacity: k * spectra)
        spectraIm.initialize(repeating: 0, count: k * spectra)
        filtered = .allocate(capacity: k * frameLength)
        filtered.initialize(repeating: 0, count: k * frameLength)
        momentRate = Float(1 - EffectMath.exp(-Double(frameLength) / (2 * sampleRate)))
        forgetting = EffectMath.exp(-Double(frameLength) / (memorySeconds * sampleRate))
        let warmUpFrames = max(1, Int(0.25 * sampleRate) / frameLength)
        var weight = 0.0
        for _ in 0..<warmUpFrames { weight = forgetting * weight + 1 }
        warmUpWeight = weight
        lastReference = .allocate(capacity: frameLength)
        lastReference.initialize(repeating: 0, count: frameLength)
        crossMoments = .allocate(capacity: k)
        crossMoments.initialize(repeating: 0, count: k)
        meanMoments = .allocate(capacity: k)
        meanMoments.initialize(repeating: 0, count: k)
        frameCross = .allocate(capacity: k)
        frameCross.initialize(repeating: 0, count: k)
        frameMean = .allocate(capacity: k)
        frameMean.initialize(repeating: 0, count: k)
        correlation = .allocate(capacity: k * k)
        correlation.initialize(repeating: 0, count: k * k)
        crossCorrelation = .allocate(capacity: k)
        crossCorrelation.initialize(repeating: 0, count: k)
        factor = .allocate(capacity: k * k)
        factor.initialize(repeating: 0, count: k * k)
        solution = .allocate(capacity: k)
        solution.initialize(repeating: 0, count: k)
        coefficientValues = .allocate(capacity: k)
        coefficientValues.initialize(repeating: 0, count: k)
    }

    /// The learned coefficient of function `k`.
    public func coefficient(_ k: Int) -> Float { coefficientValues[k] }

    public func deallocate() {
        convolution.deallocate()
        inputs.deallocate()
        spectraRe.deallocate()
        spectraIm.deallocate()
        filtered.deallocate()
        crossMoments.deallocate()
        meanMoments.deallocate()
        frameCross.deallocate()
        frameMean.deallocate()
        correlation.deallocate()
        crossCorrelation.deallocate()
        factor.deallocate()
        solution.deallocate()
        coefficientValues.deallocate()
        lastReference.deallocate()
    }

    /// Function k of the reference sample x: the odd x·|x|, x³, x⁵, the even |x|, x².
    @inline(__always)
    static func function(_ k: Int, _ x: Float) -> Float {
        switch k {
        case 0: return x * abs(x)
        case 1: return x * x * x
        case 2: return abs(x)
        case 3: return x * x
        default:
            let x2 = x * x
            return x2 * x2 * x
        }
    }

    /// Takes the linear filter's impulse response: `response(i)`, i < `length`, in output per input.
    public mutating func setFilter(length: Int, _ response: (Int) -> Float) {
        convolution.setFilter(length: length, response)
    }

    /// One frame of the aligned reference `x`: writes x + Σ aₖ·φₖ(x) to `preprocessed` (not aliasing
    /// `x`) and keeps the φₖ's spectra for `learn`.
    public mutating func prepare(reference x: UnsafePointer<Float>, preprocessed: UnsafeMutablePointer<Float>) {
        let f = frameLength
        let n = fftSize
        let count = Self.functionCount
        var power: Float = 0
        for i in 0..<f { power += x[i] * x[i] }
        for k in 0..<count {
            var cross: Float = 0
            var sum: Float = 0
            for i in 0..<f {
                let v = Self.function(k, x[i])
                cross += v * x[i]
                sum += v
            }
            frameCross[k] = cross
            frameMean[k] = sum
        }
        if power > 1e-7 * Float(f) {
            let r = momentRate
            let invF = 1 / Float(f)
            powerMoment += r * (power * invF - powerMoment)
            for k in 0..<count {
                crossMoments[k] += r * (frameCross[k] * invF - crossMoments[k])
                meanMoments[k] += r * (frameMean[k] * invF - meanMoments[k])
            }
        }
        for i in 0..<f {
            preprocessed[i] = x[i]
            lastReference[i] = x[i]
        }
        let partitions = convolution.partitionCount
        spectrumIndex = (spectrumIndex + partitions - 1) % partitions
        for j in 0..<count {
            // φⱼ − (E[φⱼ·x] / E[x²])·x − E[φⱼ]: orthogonal at lag 0 to x and to a constant (the odd
            // functions have no mean, the even ones no correlation with x, for a symmetric x).
            let slope = powerMoment > 0 ? crossMoments[j] / powerMoment : 0
            let mean = meanMoments[j]
            let a = coefficientValues[j]
            let input = inputs + j * n
            for i in 0..<(n - f) { input[i] = input[i + f] }
            let tail = input + (n - f)
            for i in 0..<f {
                let v = Self.function(j, x[i]) - slope * x[i] - mean
                tail[i] = v
                preprocessed[i] += a * v
            }
            let ring = j * partitions * convolution.binCount
            convolution.transform(input, ringRe: spectraRe + ring, ringIm: spectraIm + ring, row: spectrumIndex)
        }
    }

    /// zₖ = ĥ ∗ φₖ for the frame just prepared (only the frames that learn need it).
    mutating func filterFunctions() {
        let ring = convolution.partitionCount * convolution.binCount
        for j in 0..<Self.functionCount {
            convolution.apply(
                ringRe: spectraRe + j * ring, ringIm: spectraIm + j * ring, newest: spectrumIndex,
                into: filtered + j * frameLength)
        }
    }

    /// Learns from the linear filter's output `e` for the frame just prepared; call only on frames of
    /// far-end single talk (a talker in `e` would be read as distortion).
    public mutating func learn(error e: UnsafePointer<Float>) {
        guard hasFilter else { return }
        filterFunctions()
        let f = frameLength
        let count = Self.functionCount
        let l = forgetting
        for a in 0..<count {
            let za = filtered + a * f
            for b in a..<count {
                let zb = filtered + b * f
                var sum: Float = 0
                for i in 0..<f { sum += za[i] * zb[i] }
                correlation[a * count + b] = l * correlation[a * count + b] + Double(sum)
                correlation[b * count + a] = correlation[a * count + b]
            }
            var c: Float = 0
            for i in 0..<f { c += za[i] * e[i] }
            crossCorrelation[a] = Double(c)
        }
        correlationWeight = l * correlationWeight + 1
        // This frame's least-squares solution against the averaged correlation: R̄⁻¹·c.
        for a in 0..<count { crossCorrelation[a] *= correlationWeight }
        guard Self.solve(count: count, correlation, crossCorrelation, factor: factor, into: solution) else { return }
        // Only from a quarter of a second of far-end audio on (a few frames' correlation is nearly
        // singular), and never to a correction louder than the reference itself on this frame.
        guard correlationWeight >= warmUpWeight else { return }
        var correction: Float = 0
        var reference: Float = 0
        for i in 0..<f {
            var v: Float = 0
            for a in 0..<count {
                v += (coefficientValues[a] + step * Float(solution[a])) * inputs[a * fftSize + fftSize - f + i]
            }
            correction += v * v
        }
        for i in 0..<f { reference += lastReference[i] * lastReference[i] }
        guard correction.isFinite && correction <= reference else { return }
        for a in 0..<count { coefficientValues[a] += step * Float(solution[a]) }
    }

    /// Forgets the coefficients (a new loudspeaker or a reset).
    public mutating func reset() {
        let k = Self.functionCount
        coefficientValues.update(repeating: 0, count: k)
        correlation.update(repeating: 0, count: k * k)
        correlationWeight = 0
    }

    /// Solves the symmetric positive definite system m·x = p (n × n, row-major) by Cholesky after
    /// scaling to a unit diagonal, with a ridge of 10⁻⁶ of it (the functions' filtered powers differ by
    /// orders of magnitude); `factor` is n × n work space. False if m is not positive definite.
    public static func solve(
        count n: Int, _ m: UnsafePointer<Double>, _ p: UnsafePointer<Double>, factor l: UnsafeMutablePointer<Double>,
        into x: UnsafeMutablePointer<Double>
    ) -> Bool {
        for i in 0..<n where !(m[i * n + i] > 1e-300) || !m[i * n + i].isFinite { return false }
        // Scaled matrix into l's lower triangle, factorised in place: s·m·s with s = 1/√diag.
        for i in 0..<n {
            for j in 0...i {
                var v = m[i * n + j] / (m[i * n + i] * m[j * n + j]).squareRoot()
                if i == j { v = 1 + 1e-6 }
                for k in 0..<j { v -= l[i * n + k] * l[j * n + k] }
                if i == j {
                    guard v > 0 else { return false }
                    l[i * n + i] = v.squareRoot()
                } else {
                    l[i * n + j] = v / l[j * n + j]
                }
            }
        }
        // L·Lᵀ·y = s·p, x = s·y.
        for i in 0..<n {
            var v = p[i] / m[i * n + i].squareRoot()
            for k in 0..<i { v -= l[i * n + k] * x[k] }
            x[i] = v / l[i * n + i]
        }
        // Backwards over a plain range: `stride` instantiates generic metadata on its first use in a
        // debug build, which allocates and locks on the render thread.
        for r in 0..<n {
            let i = n - 1 - r
            var v = x[i]
            for k in (i + 1)..<n { v -= l[k * n + i] * x[k] }
            x[i] = v / l[i * n + i]
        }
        for i in 0..<n { x[i] /= m[i * n + i].squareRoot() }
        return true
    }
}
