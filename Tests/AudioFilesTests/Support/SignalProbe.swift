// Test support (control side only). Test signals and a single-bin DFT probe for measuring what a
// listener would hear in decoded audio: the level of one frequency, and how much of the energy it
// holds. Kept private to AudioFilesTests so the tests do not depend on DSPTestSupport's API.

import Foundation

/// Signal generation and measurement helpers for the AudioFiles tests.
enum SignalProbe {
    /// `frameCount` samples of `amplitude × sin(2π f n / rate)`, computed in Double.
    static func sine(frequency: Double, amplitude: Double, sampleRate: Double, frameCount: Int) -> [Float] {
        (0..<frameCount).map { n in
            Float(amplitude * sin(2 * Double.pi * frequency * Double(n) / sampleRate))
        }
    }

    /// Amplitude (peak, linear) of the component at `frequency` Hz in `samples[range]`, measured with a
    /// Hann-windowed single-bin DFT (the Goertzel quantity evaluated at an arbitrary frequency):
    /// A = 2 |Σ w[n] x[n] e^{-jωn}| / Σ w[n]. Exact for a pure sine within the window's main lobe,
    /// and at least 31 dB blind to components more than two bins away (Hann side lobes).
    static func amplitude(of samples: [Float], at frequency: Double, sampleRate: Double, range: Range<Int>) -> Double {
        let count = range.count
        guard count > 1 else { return 0 }
        let omega = 2 * Double.pi * frequency / sampleRate
        var real = 0.0
        var imaginary = 0.0
        var windowSum = 0.0
        for (offset, index) in range.enumerated() {
            let window = 0.5 - 0.5 * cos(2 * Double.pi * Double(offset) / Double(count - 1))
            let value = window * Double(samples[index])
            real += value * cos(omega * Double(index))
            imaginary -= value * sin(omega * Double(index))
            windowSum += window
        }
        return 2 * (real * real + imaginary * imaginary).squareRoot() / windowSum
    }

    /// Root-mean-square level of `samples[range]`.
    static func rms(of samples: [Float], range: Range<Int>) -> Double {
        guard !range.isEmpty else { return 0 }
        let sum = range.reduce(0.0) { $0 + Double(samples[$1]) * Double(samples[$1]) }
        return (sum / Double(range.count)).squareRoot()
    }

    /// Fraction (0…1) of the energy in `samples[range]` that the sine at `frequency` carries:
    /// (A²/2) / RMS². 1 for a clean tone; 0.99 means everything else is 20 dB down.
    static func energyFraction(of samples: [Float], at frequency: Double, sampleRate: Double, range: Range<Int>)
        -> Double
    {
        let amplitude = amplitude(of: samples, at: frequency, sampleRate: sampleRate, range: range)
        let rms = rms(of: samples, range: range)
        return rms > 0 ? (amplitude * amplitude / 2) / (rms * rms) : 0
    }

    /// 20 log10(a / b).
    static func decibels(_ a: Double, relativeTo b: Double) -> Double {
        20 * log10(a / b)
    }

    /// Index of the sample with the largest magnitude.
    static func peakIndex(of samples: [Float]) -> Int {
        samples.indices.max { abs(samples[$0]) < abs(samples[$1]) } ?? 0
    }
}
