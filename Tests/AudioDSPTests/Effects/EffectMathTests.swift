// Tests. The Swift elementary functions the render path uses instead of libm, against Glibc; and the
// parameter tables the graph layer will build its ParameterSpecs from.
import AudioDSP
import DSPTestSupport
import Foundation
import Testing

@Suite struct EffectMathTests {
    static let relativeTolerance = 1e-14

    static func relativeError(_ a: Double, _ b: Double) -> Double {
        a == b ? 0 : abs(a - b) / max(abs(b), 1e-300)
    }

    @Test func elementaryFunctionsMatchLibm() {
        var rng = SeededRandom(seed: 99)
        for _ in 0..<5000 {
            let u = Double(rng.nextFloat())  // −1 … 1
            let big = u * 700
            #expect(Self.relativeError(EffectMath.exp(big), exp(big)) < Self.relativeTolerance, "exp \(big)")
            let positive = exp(u * 690)
            #expect(
                Self.relativeError(EffectMath.log(positive), log(positive)) < Self.relativeTolerance
                    || abs(EffectMath.log(positive) - log(positive)) < 1e-15, "log \(positive)")
            #expect(Self.relativeError(EffectMath.squareRoot(positive), positive.squareRoot()) < 1e-15)
            let angle = u * 100
            #expect(abs(EffectMath.sin(angle) - sin(angle)) < 1e-15, "sin \(angle)")
            #expect(abs(EffectMath.cos(angle) - cos(angle)) < 1e-15, "cos \(angle)")
            let small = u * 1.5
            #expect(Self.relativeError(EffectMath.tan(small), tan(small)) < Self.relativeTolerance, "tan \(small)")
            let s = u * 20
            #expect(Self.relativeError(EffectMath.sinh(s), sinh(s)) < Self.relativeTolerance, "sinh \(s)")
            #expect(EffectMath.floor(big) == Foundation.floor(big))
        }
    }

    @Test func edgeCasesAreDefined() {
        #expect(EffectMath.exp(-1000) == 0 && EffectMath.exp(1000) == .infinity && EffectMath.exp(.nan).isNaN)
        #expect(EffectMath.log(0) == -.infinity && EffectMath.log(-1).isNaN && EffectMath.log(1) == 0)
        let smallest = Double.leastNonzeroMagnitude
        #expect(abs(EffectMath.log(smallest) - log(smallest)) < 1e-12)
        #expect(EffectMath.squareRoot(0) == 0 && EffectMath.squareRoot(-1).isNaN)
        let subnormal = Double.leastNormalMagnitude / 1000
        #expect(Self.relativeError(EffectMath.squareRoot(subnormal), subnormal.squareRoot()) < 1e-15)
        #expect(EffectMath.floor(-0.5) == -1 && EffectMath.floor(2) == 2 && EffectMath.floor(1e300) == 1e300)
        #expect(EffectMath.sin(.infinity).isNaN)
        #expect(abs(EffectMath.decibelsToGain(-6) - pow(10, -6.0 / 20)) < 1e-15)
        #expect(EffectMath.clamp(.nan, 0, 1) == 0)
    }
}

@Suite struct EffectParameterTableTests {
    @Test func tablesMatchTheInventory() {
        #expect(DelayKernel.parameters.map(\.name) == ["delayTime", "feedback", "lowPassCutoff", "wetDryMix"])
        #expect(DelayKernel.parameters.map(\.defaultValue) == [1, 50, 15_000, 100])
        #expect(DelayKernel.parameters[2].range(sampleRate: 44_100) == 10...22_050)
        #expect(DistortionKernel.parameters.map(\.name) == ["preGain", "wetDryMix", "preset"])
        #expect(DistortionKernel.parameters[0].range(sampleRate: 48_000) == -80...20)
        #expect(DistortionKernel.parameters.map(\.defaultValue) == [-6, 50, 0])
        #expect(ReverbKernel.parameters.map(\.name) == ["wetDryMix", "preset"])
        #expect(ReverbKernel.parameters[1].valueNames.count == 13)
        #expect(EQKernel.globalParameters.map(\.name) == ["globalGain"])
        #expect(EQKernel.bandParameters.map(\.name) == EQBandParameter.allCases.map { "\($0)" })
        #expect(EQKernel.bandParameters[0].valueNames == EQFilterType.allNames)
        #expect(EQFilterType.allNames.count == 11 && EQFilterType(name: "resonantHighShelf")?.rawValue == 10)
        #expect(EQKernel.parameterIndex(band: 2, .gain) == 14)
    }

    /// Each kernel starts at its table's defaults: rendering a fresh kernel equals rendering one whose
    /// parameters were all set to their defaults through `setParameter`.
    @Test func freshKernelsStartAtTheirDefaults() {
        let x = noise(frames: 4000, seed: 4)
        var fresh = DelayKernel(sampleRate: effectTestRate, maxBlockFrames: 64, channelCount: 1)
        var set = DelayKernel(sampleRate: effectTestRate, maxBlockFrames: 64, channelCount: 1)
        for (i, p) in DelayKernel.parameters.enumerated() { set.setParameter(i, value: p.defaultValue) }
        #expect(render(&fresh, [x]) == render(&set, [x]))
        var freshD = DistortionKernel(sampleRate: effectTestRate, maxBlockFrames: 64, channelCount: 1)
        var setD = DistortionKernel(sampleRate: effectTestRate, maxBlockFrames: 64, channelCount: 1)
        for (i, p) in DistortionKernel.parameters.enumerated() { setD.setParameter(i, value: p.defaultValue) }
        #expect(render(&freshD, [x]) == render(&setD, [x]))
        var freshR = ReverbKernel(sampleRate: effectTestRate, maxBlockFrames: 64, channelCount: 1)
        var setR = ReverbKernel(sampleRate: effectTestRate, maxBlockFrames: 64, channelCount: 1)
        for (i, p) in ReverbKernel.parameters.enumerated() { setR.setParameter(i, value: p.defaultValue) }
        #expect(render(&freshR, [x]) == render(&setR, [x]))
        var freshE = EQKernel(sampleRate: effectTestRate, maxBlockFrames: 64, channelCount: 1, bandCount: 2)
        var setE = EQKernel(sampleRate: effectTestRate, maxBlockFrames: 64, channelCount: 1, bandCount: 2)
        setE.setParameter(0, value: EQKernel.globalParameters[0].defaultValue)
        for b in 0..<2 {
            for p in EQBandParameter.allCases {
                let v = EQKernel.bandParameters[p.rawValue].defaultValue
                setE.setParameter(EQKernel.parameterIndex(band: b, p), value: v)
            }
        }
        #expect(render(&freshE, [x]) == render(&setE, [x]))
        for k in [fresh, set] { k.deallocate() }
        for k in [freshD, setD] { k.deallocate() }
        for k in [freshR, setR] { k.deallocate() }
        for k in [freshE, setE] { k.deallocate() }
    }
}
