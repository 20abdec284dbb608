// Control side (run's main loop). Turns JACK transport, polled every 10 ms, into remote commands:
// a start, a stop, and a locate (the frame moved other than by rolling).
import Foundation
import JackHost

struct TransportFollower {
    private var last: JackTransportPosition?
    private var lastTime = 0.0

    /// The change since the last call, if any: whether it rolls, and where it was located (seconds).
    mutating func follow(_ position: JackTransportPosition, sampleRate: Double, period: Int)
        -> (rolling: Bool, locatedSeconds: Double?)?
    {
        let now = ProcessInfo.processInfo.systemUptime
        defer {
            last = position
            lastTime = now
        }
        guard let last, sampleRate > 0 else { return nil }
        // Rolling moves the frame by the time passed; a locate moves it by more than two periods (or
        // 100 ms) otherwise.
        let expected = last.isRolling ? Double(last.frame) + (now - lastTime) * sampleRate : Double(last.frame)
        let slack = max(2 * Double(period), 0.1 * sampleRate)
        let located = abs(Double(position.frame) - expected) > slack
        guard located || position.isRolling != last.isRolling else { return nil }
        return (position.isRolling, located ? Double(position.frame) / sampleRate : nil)
    }
}
