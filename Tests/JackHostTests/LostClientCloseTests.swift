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

        /// A core whose session lost its server, with `standIn` (living `seconds`) as the notification
        /// thread; then the wait. Returns whether the stand-in had ended when the wait returned.
        private func waitAfterLoss(
            _ core: JackHostCore, threadLiving seconds: Double, byInfoCallback: Bool
        ) -> Bool {
            let standIn = StandIn()
            standIn.start(seconds: seconds)
            core.notificationThreadID.store(standIn.id.load(ordering: .acquiring), ordering: .relaxed)
            core.shutdownByInfoCallback.store(byInfoCallback, ordering: .relaxed)
            core.waitForNotificationThreadToEnd()
            return standIn.ended.load(ordering: .acquiring)
        }

        @Test func theCloseWaitsUntilTheNotificationThreadHasEnded() {
            let core = JackHostCore()
            #expect(waitAfterLoss(core, threadLiving: 0.3, byInfoCallback: true), "returned while the thread ran")
            // Gone from the process's tasks: a second wait returns well inside the grace.
            let start = Date()
            core.waitForNotificationThreadToEnd()
            #expect(Date().timeIntervalSince(start) < JackHostCore.notificationThreadGrace / 2)
        }

        @Test func aLossReportedThroughThePlainCallbackDoesNotWait() {
            let lived = 3 * JackHostCore.notificationThreadGrace
            #expect(!waitAfterLoss(JackHostCore(), threadLiving: lived, byInfoCallback: false))
        }

        @Test func aThreadThatOutlivesTheGraceIsNotWaitedForLonger() {
            let lived = 3 * JackHostCore.notificationThreadGrace
            #expect(!waitAfterLoss(JackHostCore(), threadLiving: lived, byInfoCallback: true))
        }
    }
}
