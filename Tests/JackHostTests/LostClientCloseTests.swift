// Before a lost client is closed, the event thread waits for libjack's notification thread to end:
// closing cancels that thread asynchronously, and cancelled inside a notification it can leave
// libjack's process-wide lock held (DECISIONS: the JACK host comes back after a server loss). Here a
// thread of ours stands in for the notification thread.
import CJack
import Foundation
@testable import JackHost
import Synchronization
import Testing

extension JackHostTests {
    @Suite("Closing a lost client")
    struct LostClientClose {
        /// A thread that records its kernel id, lives `seconds`, and sets `ended` as its last act.
        private final class StandIn: @unchecked Sendable {
            let id = Atomic<Int32>(0)
            let ended = Atomic<Bool>(false)

            func start(seconds: Double) {
                let thread = Thread { [self] in
                    id.store(jackshim_thread_id(), ordering: .releasing)
                    usleep(UInt32(seconds * 1e6))
                    ended.store(true, ordering: .releasing)
                }
                thread.start()
                while id.load(ordering: .acquiring) == 0 { usleep(1_000) }
            }
        }

        @Test func theCloseWaitsUntilTheNotificationThreadHasEnded() {
            let core = JackHostCore()
            let standIn = StandIn()
            standIn.start(seconds: 0.3)
            core.notificationThreadID.store(standIn.id.load(ordering: .acquiring), ordering: .relaxed)
            core.shutdownByInfoCallback.store(true, ordering: .relaxed)
            core.waitForNotificationThreadToEnd()
            let ended = standIn.ended.load(ordering: .acquiring)
            #expect(ended, "returned while the thread still ran")
            // Gone from the process's tasks: a second wait returns well inside the grace.
            let start = Date()
            core.waitForNotificationThreadToEnd()
            #expect(Date().timeIntervalSince(start) < JackHostCore.notificationThreadGrace / 2)
        }

        @Test func aLossReportedThroughThePlainCallbackDoesNotWait() {
            let core = JackHostCore()
            let standIn = StandIn()
            standIn.start(seconds: 3 * JackHostCore.notificationThreadGrace)
            core.notificationThreadID.store(standIn.id.load(ordering: .acquiring), ordering: .relaxed)
            core.shutdownByInfoCallback.store(false, ordering: .relaxed)
            core.waitForNotificationThreadToEnd()
            let ended = standIn.ended.load(ordering: .acquiring)
            #expect(!ended)
        }

        @Test func aThreadThatOutlivesTheGraceIsNotWaitedForLonger() {
            let core = JackHostCore()
            let standIn = StandIn()
            standIn.start(seconds: 3 * JackHostCore.notificationThreadGrace)
            core.notificationThreadID.store(standIn.id.load(ordering: .acquiring), ordering: .relaxed)
            core.shutdownByInfoCallback.store(true, ordering: .relaxed)
            core.waitForNotificationThreadToEnd()
            let ended = standIn.ended.load(ordering: .acquiring)
            #expect(!ended)
        }
    }
}
