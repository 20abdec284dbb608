// Control side. The one way this module closes a descriptor it opened.

import Foundation

/// Closes a descriptor this module owns.
///
/// A descriptor closed twice may by then be another thread's file, since the kernel hands a freed
/// number out again at once. A close that finds nothing open is therefore a bug here, and debug
/// builds (the tests) stop on it.
func closeOwnedDescriptor(_ fd: Int32) {
    let result = close(fd)
    assert(result == 0 || errno != EBADF, "descriptor \(fd) was already closed")
}
