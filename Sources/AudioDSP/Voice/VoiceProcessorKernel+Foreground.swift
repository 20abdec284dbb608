// Render side (the thread that calls `process`): the choice between the MDF's error and a frozen copy's.

extension VoiceProcessorKernel {
    /// Compares the first microphone's MDF error with the frozen copy's and puts the copy's into
    /// `errorFrame` (and the echo estimate to match) while it is clearly smaller, or, while the near end
    /// talks, not clearly larger; crossfading over a frame when the choice changes.
    func useForeground(_ estimate: UnsafePointer<Float>, doubleTalkMargin margin: Float) {
        let f = frameLength
        var filterPower: Float = 0
        var copyPower: Float = 0
        for n in 0..<f {
            // notch(mic) = echo estimate + error
            foregroundError[n] = echoFrame[n] + errorFrame[n] - estimate[n]
            filterPower += errorFrame[n] * errorFrame[n]
            copyPower += foregroundError[n] * foregroundError[n]
        }
        filterErrorPower += 0.3 * (filterPower - filterErrorPower)
        foregroundErrorPower += 0.3 * (copyPower - foregroundErrorPower)
        let slow = doubleTalkComparisonRate
        filterErrorPowerSlow += slow * (filterPower - filterErrorPowerSlow)
        foregroundErrorPowerSlow += slow * (copyPower - foregroundErrorPowerSlow)
        let better = foregroundErrorPower < Self.foregroundMargin * filterErrorPower
        let doubleTalkChoice =
            nearEndHangover > 0
            && foregroundErrorPowerSlow < margin * filterErrorPowerSlow
        let target: Float = better || doubleTalkChoice ? 1 : 0
        guard target > 0 || foregroundShare > 0 else { return }
        let start = foregroundShare
        for n in 0..<f {
            let w = start + (target - start) * Float(n + 1) / Float(f)
            let d = echoFrame[n] + errorFrame[n]
            let e = errorFrame[n] + w * (foregroundError[n] - errorFrame[n])
            errorFrame[n] = e
            echoFrame[n] = d - e
        }
        foregroundShare = target
    }
}
