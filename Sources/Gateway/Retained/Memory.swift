#if canImport(Glibc)
import Glibc
#endif

/// The C library's memory, as the start of a big home leaves it.
enum Memory {
    /// glibc keeps memory freed by the start (the configuration's parse tree, the first payloads)
    /// in its arenas; `malloc_trim` hands it back to the system, so the resident size is what the
    /// gateway really holds.
    static func returnFreedMemory() {
        #if os(Linux)
        _ = malloc_trim(0)
        #endif
    }
}

#if os(Linux)
/// glibc's `malloc_trim(3)` (declared in `<malloc.h>`, which Swift's Glibc module leaves out).
@_silgen_name("malloc_trim")
private func malloc_trim(_ pad: Int) -> Int32
#endif
