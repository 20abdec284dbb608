import AudioDSP
import DSPTestSupport
import Testing

@Suite struct ParameterRampTests {
    @Test func rampEndsExactlyOnTarget() {
        var ramp = ParameterRamp(0.25)
        ramp.ramp(to: 0.8, frames: 960)
        var last: Float = 0
        for _ in 0..<960 { last = ramp.next() }
        #expect(ramp.value == 0.8)
        #expect(!ramp.isRamping)
        #expect(abs(last - 0.8) < 1e-3)
    }

    @Test(arguments: [1, 7, 64, 333])
    func splitRampIsBitIdenticalToPerSample(chunk: Int) {
        var a = ParameterRamp(1)
        var b = ParameterRamp(1)
        a.ramp(to: 0.1, frames: 1000)
        b.ramp(to: 0.1, frames: 1000)
        var perSample: [Float] = []
        for _ in 0..<1500 { perSample.append(a.next()) }
        var chunked: [Float] = []
        var done = 0
        while done < 1500 {
            let n = min(chunk, 1500 - done)
            var copy = b
            for _ in 0..<n { chunked.append(copy.next()) }
            b.advance(frames: n)
            #expect(b.value == copy.value)
            done += n
        }
        #expect(perSample == chunked)
    }

    @Test func rampIsMonotonicWithBoundedStep() {
        var ramp = ParameterRamp(0)
        ramp.ramp(to: 1, frames: 480)
        var prev = ramp.next()
        for _ in 0..<600 {
            let v = ramp.next()
            #expect(v >= prev)
            #expect(v - prev <= 1.0 / 480 + 1e-6)
            prev = v
        }
    }
}

@Suite struct EqualPowerPannerTests {
    @Test func monoPanKeepsUnitPowerEverywhere() {
        for i in 0...100 {
            let pan = Float(i) / 50 - 1
            let (l, r) = EqualPowerPanner.monoGains(pan: pan)
            #expect(abs(l * l + r * r - 1) < 1e-6, "pan \(pan)")
        }
    }

    @Test func centreIsMinus3dB() {
        let (l, r) = EqualPowerPanner.monoGains(pan: 0)
        #expect(abs(Decibels.fromAmplitude(Double(l)) - -3.0103) < 1e-3)
        #expect(l == r)
    }

    @Test func hardPansSilenceTheOtherSide() {
        let left = EqualPowerPanner.monoGains(pan: -1)
        #expect(abs(left.left - 1) < 1e-7 && abs(left.right) < 1e-7)
        let right = EqualPowerPanner.monoGains(pan: 1)
        #expect(abs(right.right - 1) < 1e-7 && abs(right.left) < 1e-7)
    }

    @Test func balanceLeavesCentreAtUnityAndMirrors() {
        let c = EqualPowerPanner.balanceGains(pan: 0)
        #expect(abs(c.left - 1) < 1e-6 && abs(c.right - 1) < 1e-6)
        for i in 0...20 {
            let p = Float(i) / 20
            let a = EqualPowerPanner.balanceGains(pan: p)
            let b = EqualPowerPanner.balanceGains(pan: -p)
            #expect(abs(a.left - b.right) < 1e-6 && abs(a.right - b.left) < 1e-6)
        }
        let hard = EqualPowerPanner.balanceGains(pan: -1)
        #expect(abs(hard.right) < 1e-6 && hard.left == 1)
    }
}

@Suite struct SPSCQueueTests {
    @Test func deliversInOrderAcrossThreadsWithoutLoss() async {
        let queue = SPSCQueue<Int>(minimumCapacity: 64)
        defer { queue.deallocate() }
        let total = 200_000
        let producer = Task.detached {
            var i = 0
            while i < total { if queue.push(i) { i += 1 } }
        }
        var expected = 0
        while expected < total {
            if let v = queue.pop() {
                #expect(v == expected)
                if v != expected { break }
                expected += 1
            }
        }
        await producer.value
        #expect(queue.pop() == nil)
    }

    @Test func refusesWhenFull() {
        let queue = SPSCQueue<Int>(minimumCapacity: 4)
        defer { queue.deallocate() }
        for i in 0..<queue.capacity { #expect(queue.push(i)) }
        #expect(!queue.push(99))
        #expect(queue.pop() == 0)
        #expect(queue.push(99))
    }
}
