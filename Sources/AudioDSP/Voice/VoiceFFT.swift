// Control side: init, deallocate. Render side: forward, inverse (no allocation, no locks).

/// Real FFT of a power-of-two size `n`, computed as a complex radix-2 FFT of size n/2 on the even/odd
/// samples packed as real/imaginary parts, then split into the n/2 + 1 bins of the real transform
/// (E. O. Brigham, *The Fast Fourier Transform and Its Applications*, 1988, §9-4, "Two N-point real
/// sequences / a 2N-point real sequence"). Unscaled forward, 1/n-scaled inverse, so inverse∘forward = id.
/// Spectra are split arrays (`re`, `im`) of n/2 + 1 bins. Cost: about 2.5·n·log2(n) flops per transform.
public struct VoiceFFT {
    public let size: Int
    @usableFromInline let half: Int
    @usableFromInline let workRe: UnsafeMutablePointer<Float>
    @usableFromInline let workIm: UnsafeMutablePointer<Float>
    /// The twiddles of the complex transform's stages of length L ≥ 8, stage after stage, each
    /// contiguous: e^{−2πij/L}, j < L/2, from index L/2 − 4 (so the butterflies run over contiguous
    /// memory and vectorise).
    @usableFromInline let twiddleRe: UnsafeMutablePointer<Float>
    @usableFromInline let twiddleIm: UnsafeMutablePointer<Float>
    /// e^{−2πik/n}, k ≤ half: the split twiddles.
    @usableFromInline let splitRe: UnsafeMutablePointer<Float>
    @usableFromInline let splitIm: UnsafeMutablePointer<Float>
    @usableFromInline let bitReverse: UnsafeMutablePointer<Int32>

    /// `size` must be a power of two, at least 4.
    public init(size: Int) {
        precondition(size >= 4 && size & (size - 1) == 0, "VoiceFFT size must be a power of two")
        self.size = size
        half = size / 2
        workRe = .allocate(capacity: half)
        workIm = .allocate(capacity: half)
        twiddleRe = .allocate(capacity: max(1, half))
        twiddleIm = .allocate(capacity: max(1, half))
        splitRe = .allocate(capacity: half + 1)
        splitIm = .allocate(capacity: half + 1)
        bitReverse = .allocate(capacity: half)
        twiddleRe.initialize(repeating: 1, count: max(1, half))
        twiddleIm.initialize(repeating: 0, count: max(1, half))
        var length = 8
        while length <= half {
            let step = half / length
            for j in 0..<(length / 2) {
                let a = -2 * EffectMath.pi * Double(j * step) / Double(half)
                let (sine, cosine) = EffectMath.sinCos(a)
                twiddleRe[length / 2 - 4 + j] = Float(cosine)
                twiddleIm[length / 2 - 4 + j] = Float(sine)
            }
            length *= 2
        }
        for k in 0...half {
            let a = -2 * EffectMath.pi * Double(k) / Double(size)
            let (sine, cosine) = EffectMath.sinCos(a)
            splitRe[k] = Float(cosine)
            splitIm[k] = Float(sine)
        }
        var bits = 0
        while 1 << bits < half { bits += 1 }
        for i in 0..<half {
            var r = 0
            for b in 0..<bits where i & (1 << b) != 0 { r |= 1 << (bits - 1 - b) }
            bitReverse[i] = Int32(r)
        }
    }

    public func deallocate() {
        workRe.deallocate()
        workIm.deallocate()
        twiddleRe.deallocate()
        twiddleIm.deallocate()
        splitRe.deallocate()
        splitIm.deallocate()
        bitReverse.deallocate()
    }

    /// In-place complex FFT of `workRe`/`workIm` (size half), forward sign; input already bit-reversed.
    /// The first two stages (twiddles ±1, ±i) are done without multiplications; the others run block by
    /// block over contiguous halves and twiddles. Each butterfly computes what it always did, in the same
    /// stage order, so the results do not depend on the loop order.
    @inlinable
    func complexTransform() {
        let re = workRe
        let im = workIm
        // Stage 1: length 2.
        var a = 0
        while a < half {
            let tr = re[a + 1]
            let ti = im[a + 1]
            re[a + 1] = re[a] - tr
            im[a + 1] = im[a] - ti
            re[a] += tr
            im[a] += ti
            a += 2
        }
        // Stage 2: length 4, twiddles 1 and −i.
        if half >= 4 {
            a = 0
            while a < half {
                var tr = re[a + 2]
                var ti = im[a + 2]
                re[a + 2] = re[a] - tr
                im[a + 2] = im[a] - ti
                re[a] += tr
                im[a] += ti
                // (re + i·im)·(−i) = im − i·re
                tr = im[a + 3]
                ti = -re[a + 3]
                re[a + 3] = re[a + 1] - tr
                im[a + 3] = im[a + 1] - ti
                re[a + 1] += tr
                im[a + 1] += ti
                a += 4
            }
        }
        var length = 8
        while length <= half {
            let h = length / 2
            let wRe = twiddleRe + (h - 4)
            let wIm = twiddleIm + (h - 4)
            var start = 0
            while start < half {
                let lowRe = re + start
                let lowIm = im + start
                let highRe = re + start + h
                let highIm = im + start + h
                for j in 0..<h {
                    let wr = wRe[j]
                    let wi = wIm[j]
                    let tr = highRe[j] * wr - highIm[j] * wi
                    let ti = highRe[j] * wi + highIm[j] * wr
                    highRe[j] = lowRe[j] - tr
                    highIm[j] = lowIm[j] - ti
                    lowRe[j] += tr
                    lowIm[j] += ti
                }
                start += length
            }
            length *= 2
        }
    }

    /// X = FFT(x): `x` has `size` samples; writes size/2 + 1 bins.
    @inlinable
    public func forward(_ x: UnsafePointer<Float>, re: UnsafeMutablePointer<Float>, im: UnsafeMutablePointer<Float>) {
        for i in 0..<half {
            let r = Int(bitReverse[i])
            workRe[r] = x[2 * i]
            workIm[r] = x[2 * i + 1]
        }
        complexTransform()
        for k in 0...half {
            let a = k == half ? 0 : k
            let m = k == 0 ? 0 : half - k
            let ar = workRe[a]
            let ai = workIm[a]
            let br = workRe[m]
            let bi = -workIm[m]
            let eRe = 0.5 * (ar + br)
            let eIm = 0.5 * (ai + bi)
            // Fo = −i·(Z[k] − conj Z[half−k])/2
            let oRe = 0.5 * (ai - bi)
            let oIm = -0.5 * (ar - br)
            let wr = splitRe[k]
            let wi = splitIm[k]
            re[k] = eRe + wr * oRe - wi * oIm
            im[k] = eIm + wr * oIm + wi * oRe
        }
    }

    /// x = IFFT(X) with 1/size scaling: reads size/2 + 1 bins (the imaginary parts of bins 0 and size/2
    /// are ignored), writes `size` samples.
    @inlinable
    public func inverse(re: UnsafePointer<Float>, im: UnsafePointer<Float>, _ x: UnsafeMutablePointer<Float>) {
        let scale = 1 / Float(half)
        for k in 0..<half {
            let m = half - k
            let ar = re[k]
            let ai = k == 0 ? 0 : im[k]
            let br = re[m]
            let bi = m == half ? 0 : -im[m]
            let eRe = 0.5 * (ar + br)
            let eIm = 0.5 * (ai + bi)
            let dRe = 0.5 * (ar - br)
            let dIm = 0.5 * (ai - bi)
            // Fo = d·conj(W^k)
            let wr = splitRe[k]
            let wi = -splitIm[k]
            let oRe = dRe * wr - dIm * wi
            let oIm = dRe * wi + dIm * wr
            // Z = Fe + i·Fo, conjugated for the inverse through the forward transform.
            let r = Int(bitReverse[k])
            workRe[r] = eRe - oIm
            workIm[r] = -(eIm + oRe)
        }
        complexTransform()
        for i in 0..<half {
            x[2 * i] = workRe[i] * scale
            x[2 * i + 1] = -workIm[i] * scale
        }
    }
}
