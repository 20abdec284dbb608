// Control side. Parameter tables of the effect kinds, built from the kernels' own descriptions.
import AudioDSP

extension NodeKind {
    /// Default EQ band count when a patch or `/node/new` does not give `bands`.
    public static let defaultEQBandCount = 4

    /// The parameters of an effect node (an EQ with `bandCount` bands).
    static func effectParameters(_ kind: NodeKind, bandCount: Int) -> [ParameterSpec] {
        var specs: [ParameterSpec] = []
        switch kind {
        case .reverb: specs = kernelSpecs(ReverbKernel.parameters)
        case .delay: specs = kernelSpecs(DelayKernel.parameters)
        case .distortion: specs = kernelSpecs(DistortionKernel.parameters)
        case .timepitch: specs = kernelSpecs(TimePitchKernel.parameters)
        case .varispeed: specs = kernelSpecs(VarispeedKernel.parameters)
        case .eq:
            for parameter in EQKernel.globalParameters {
                var s = spec(from: parameter)
                s.kernelIndex = EQKernel.globalGainIndex
                specs.append(s)
            }
            specs.append(
                ParameterSpec(
                    .bands, .int, unit: "bands", range: 1...Double(EQKernel.maxBandCount),
                    default: .int(defaultEQBandCount), creationOnly: true,
                    "Number of bands (AVAudioUnitEQ numberOfBands); set when the node is created."))
            for band in 0..<bandCount {
                for (parameter, which) in zip(EQKernel.bandParameters, EQBandParameter.allCases) {
                    var s = spec(from: parameter)
                    s.name = "band\(band).\(parameter.name)"
                    s.key = nil
                    s.kernelIndex = EQKernel.parameterIndex(band: band, which)
                    specs.append(s)
                }
            }
        default:
            return []
        }
        specs.append(spec(from: EffectParameter.bypass))
        // Varispeed only changes the clock, which a JACK insert (one period in, one out) cannot do; a
        // time-pitch insert runs at rate 1 and shifts pitch (DECISIONS.md).
        if kind != .varispeed {
            specs.append(
                ParameterSpec(
                    .insert, .bool, default: .bool(false),
                    kind == .timepitch
                        ? "true exposes the effect as JACK ports <node>_in_N and <node>_out_N and runs it at rate 1 "
                            + "(a pitch shifter; rate is kept for later): its sources then run on the engine's clock."
                        : "true exposes the effect as JACK ports <node>_in_N and <node>_out_N: what arrives "
                            + "there is added to its input, and its output also goes there (latency reported)."))
        }
        // The time-pitch kernel runs a Rubber Band stretcher over at most 8 channels.
        specs.append(
            ParameterSpec(
                .channels, .int, unit: "channels", range: kind == .timepitch ? 1...8 : 1...64, default: .int(2),
                creationOnly: true, "Channels the effect processes; inputs are up/down-mixed to it. Set at creation."))
        if kind == .timepitch {
            specs.append(
                ParameterSpec(
                    .latency, .int, unit: "frames", range: 0...1e6, default: .int(0), readOnly: true,
                    "Exact delay of the output behind the input as an insert at rate 1 and pitch 0, "
                        + "measured when the kernel is built (2686 at 48 kHz); the insert ports report it to JACK."))
        }
        return specs
    }

    /// The specs of a kernel's parameters, each carrying its `setParameter` index (its position in the
    /// kernel's table, which is the kernel's `Parameter` order).
    private static func kernelSpecs(_ parameters: [EffectParameter]) -> [ParameterSpec] {
        parameters.enumerated().map { index, parameter in
            var s = spec(from: parameter)
            s.kernelIndex = index
            return s
        }
    }

    /// A ParameterSpec from a kernel's description: `index` parameters become named choices, `bool` ones
    /// booleans, the rest floats.
    private static func spec(from p: EffectParameter) -> ParameterSpec {
        if !p.valueNames.isEmpty {
            return ParameterSpec(
                p.name, .string, default: .string(p.valueNames[Int(p.defaultValue)]), smoothed: p.isSmoothed,
                choices: p.valueNames, p.summary)
        }
        if p.unit == "bool" {
            return ParameterSpec(p.name, .bool, default: .bool(p.defaultValue != 0), smoothed: p.isSmoothed, p.summary)
        }
        var spec = ParameterSpec(
            p.name, .float, unit: p.unit, range: p.minimum...p.maximum, default: .float(p.defaultValue),
            smoothed: p.isSmoothed, p.summary + (p.isMaximumNyquist ? " (at most half the sample rate)" : ""))
        spec.isMaximumNyquist = p.isMaximumNyquist
        return spec
    }

    /// The kernel value for a validated parameter value (choice names become their index).
    static func kernelValue(_ spec: ParameterSpec, _ value: ParameterValue) -> Double {
        if !spec.choices.isEmpty, let name = value.stringValue, let index = spec.choices.firstIndex(of: name) {
            return Double(index)
        }
        return value.doubleValue ?? 0
    }
}
