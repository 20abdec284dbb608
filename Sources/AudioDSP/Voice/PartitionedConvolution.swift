// Control side: init, deallocate. Render side: setFilter, slide, apply, accumulate, adapt, constrain
// (no allocation, no locks).

/// Partitioned overlap-save convolution with one impulse response, a frame per partition: the response
/// cut into frames and transformed; `apply` multiplies each with the spectrum of the signal's window that
/// many frames ago and sums; the last frame of the inverse transform is the linear convolution (the
/// window, `fftSize` samples, is at least two frames long). An adaptive filter moves the partitions
/// itself (`adapt`, `constrain`).
public struct PartitionedConvolution {
    public let frameLength: Int
    public let fftSize: Int
    public let binCount: Int
    public let partitionCount: Int
    let fft: VoiceFFT
    let filterRe: UnsafeMutablePointer<Float>
    let filterIm: UnsafeMutablePointer<Float>
    let accumulatorRe: UnsafeMutablePointer<Float>
    let accumulatorIm: UnsafeMutablePointer<Float>
    let time: UnsafeMutablePointer<Float>
    public private(set) var hasFilter = false

    /// `filterLength`: the response's length in samples.
    public init(frameLength: Int, filterLength: Int) {
        precondition(frameLength > 0 && filterLength > 0)
        self.frameLength = frameLength
        var size = 4
        while size < 2 * frameLength { size *= 2 }
        fftSize = size
        binCount = size / 2 + 1
        partitionCount = (filterLength + frameLength - 1) / frameLength
        fft = VoiceFFT(size: size)
        filterRe = .allocate(capacity: partitionCount * binCount)
        filterRe.initialize(repeating: 0, count: partitionCount * binCount)
        filterIm = .allocate(capacity: partitionCount * binCount)
        filterIm.initialize(repeating: 0, count: partitionCount * binCount)
        accumulatorRe = .allocate(capacity: binCount)
        accumulatorIm = .allocate(capacity: binCount)
        time = .allocate(capacity: size)
        time.initialize(repeating: 0, count: size)
    }

    public func deallocate() {
        fft.deallocate()
        filterRe.deallocate()
        filterIm.deallocate()
        accumulatorRe.deallocate()
        accumulatorIm.deallocate()
        time.deallocate()
    }

    /// Forgets the filter: `hasFilter` is false until the next `setFilter`.
    public mutating func forget() { hasFilter = false }

    /// Takes the impulse response: `response(i)`, i < `length`, in output per input.
    public mutating func setFilter(length: Int, _ response: (Int) -> Float) {
        let f = frameLength
        for p in 0..<partitionCount {
            for i in 0..<fftSize { time[i] = 0 }
            for i in 0..<f where p * f + i < length { time[i] = response(p * f + i) }
            fft.forward(time, re: filterRe + p * binCount, im: filterIm + p * binCount)
        }
        hasFilter = true
    }

    /// Moves a window of `fftSize` samples on by the frame `x` (`frameLength` samples, the newest at the
    /// end) and puts its spectrum into row `row` of a ring of `partitionCount` spectra.
    public func slide(
        _ window: UnsafeMutablePointer<Float>, by x: UnsafePointer<Float>, ringRe: UnsafeMutablePointer<Float>,
        ringIm: UnsafeMutablePointer<Float>, row: Int
    ) {
        let f = frameLength
        let n = fftSize
        for i in 0..<(n - f) { window[i] = window[i + f] }
        for i in 0..<f { window[n - f + i] = x[i] }
        transform(window, ringRe: ringRe, ringIm: ringIm, row: row)
    }

    /// The window's spectrum (`fftSize` samples) into row `row` of a ring of `partitionCount` spectra.
    public func transform(
        _ window: UnsafePointer<Float>, ringRe: UnsafeMutablePointer<Float>, ringIm: UnsafeMutablePointer<Float>,
        row: Int
    ) {
        fft.forward(window, re: ringRe + row * binCount, im: ringIm + row * binCount)
    }

    /// The newest frame of the signal whose window spectra are in the ring (newest at row `newest`, older
    /// ones after it, wrapping), convolved with the response, into `output` (`frameLength` samples).
    public func apply(
        ringRe: UnsafePointer<Float>, ringIm: UnsafePointer<Float>, newest: Int,
        into output: UnsafeMutablePointer<Float>
    ) {
        for k in 0..<binCount {
            accumulatorRe[k] = 0
            accumulatorIm[k] = 0
        }
        accumulate(ringRe: ringRe, ringIm: ringIm, newest: newest, intoRe: accumulatorRe, intoIm: accumulatorIm)
        inverse(accumulatorRe, accumulatorIm, into: output)
    }

    /// Adds the spectrum of the response times the ring's spectra (as `apply` pairs them) to `intoRe`,
    /// `intoIm` (`binCount` bins each).
    public func accumulate(
        ringRe: UnsafePointer<Float>, ringIm: UnsafePointer<Float>, newest: Int,
        intoRe: UnsafeMutablePointer<Float>, intoIm: UnsafeMutablePointer<Float>
    ) {
        let bins = binCount
        let body = bins & ~3
        for p in 0..<partitionCount {
            let xRe = ringRe + ((newest + p) % partitionCount) * bins
            let xIm = ringIm + ((newest + p) % partitionCount) * bins
            let hRe = filterRe + p * bins
            let hIm = filterIm + p * bins
            // Four bins at a time, each lane the scalar arithmetic below.
            var k = 0
            while k < body {
                let xr = VoiceLanes.load(xRe + k)
                let xi = VoiceLanes.load(xIm + k)
                let hr = VoiceLanes.load(hRe + k)
                let hi = VoiceLanes.load(hIm + k)
                VoiceLanes.store(VoiceLanes.load(intoRe + k) + (hr * xr - hi * xi), intoRe + k)
                VoiceLanes.store(VoiceLanes.load(intoIm + k) + (hr * xi + hi * xr), intoIm + k)
                k += 4
            }
            while k < bins {
                let xr = xRe[k]
                let xi = xIm[k]
                let hr = hRe[k]
                let hi = hIm[k]
                intoRe[k] += hr * xr - hi * xi
                intoIm[k] += hr * xi + hi * xr
                k += 1
            }
        }
    }

    /// The last frame of the inverse transform of a spectrum (`binCount` bins; overwritten) into `output`.
    public func inverse(
        _ re: UnsafeMutablePointer<Float>, _ im: UnsafeMutablePointer<Float>, into output: UnsafeMutablePointer<Float>
    ) {
        fft.inverse(re: re, im: im, time)
        for i in 0..<frameLength { output[i] = time[fftSize - frameLength + i] }
    }

    /// The spectrum of one frame of error (`frameLength` samples) at the end of an otherwise silent window,
    /// as overlap-save pairs it with the ring's windows, into `re`, `im`.
    public func errorSpectrum(
        _ error: UnsafePointer<Float>, re: UnsafeMutablePointer<Float>, im: UnsafeMutablePointer<Float>
    ) {
        for i in 0..<(fftSize - frameLength) { time[i] = 0 }
        for i in 0..<frameLength { time[fftSize - frameLength + i] = error[i] }
        fft.forward(time, re: re, im: im)
    }

    /// A gradient step: adds conj(X) · E to each partition, X the ring's spectrum that partition pairs
    /// with and E a (normalised) error spectrum.
    public mutating func adapt(
        ringRe: UnsafePointer<Float>, ringIm: UnsafePointer<Float>, newest: Int,
        errorRe: UnsafePointer<Float>, errorIm: UnsafePointer<Float>
    ) {
        let bins = binCount
        let body = bins & ~3
        for p in 0..<partitionCount {
            let xRe = ringRe + ((newest + p) % partitionCount) * bins
            let xIm = ringIm + ((newest + p) % partitionCount) * bins
            let hRe = filterRe + p * bins
            let hIm = filterIm + p * bins
            var k = 0
            while k < body {
                let xr = VoiceLanes.load(xRe + k)
                let xi = VoiceLanes.load(xIm + k)
                let er = VoiceLanes.load(errorRe + k)
                let ei = VoiceLanes.load(errorIm + k)
                VoiceLanes.store(VoiceLanes.load(hRe + k) + (xr * er + xi * ei), hRe + k)
                VoiceLanes.store(VoiceLanes.load(hIm + k) + (xr * ei - xi * er), hIm + k)
                k += 4
            }
            while k < bins {
                let xr = xRe[k]
                let xi = xIm[k]
                let er = errorRe[k]
                let ei = errorIm[k]
                hRe[k] += xr * er + xi * ei
                hIm[k] += xr * ei - xi * er
                k += 1
            }
        }
    }

    /// Moves the response `frames` frames earlier: partition p takes partition p + `frames`'s spectrum, and
    /// the last `frames` partitions are silent (for a signal that is now delayed by as many frames).
    public func advance(byFrames frames: Int) {
        precondition(frames >= 0)
        let bins = binCount
        for p in 0..<partitionCount {
            let to = p * bins
            if p + frames < partitionCount {
                let from = (p + frames) * bins
                for k in 0..<bins {
                    filterRe[to + k] = filterRe[from + k]
                    filterIm[to + k] = filterIm[from + k]
                }
            } else {
                for k in 0..<bins {
                    filterRe[to + k] = 0
                    filterIm[to + k] = 0
                }
            }
        }
    }

    /// Brings partition `partition` back to a response a frame long (the gradient's circular part out).
    public func constrain(partition: Int) {
        let h = partition * binCount
        fft.inverse(re: filterRe + h, im: filterIm + h, time)
        for i in frameLength..<fftSize { time[i] = 0 }
        fft.forward(time, re: filterRe + h, im: filterIm + h)
    }
}
