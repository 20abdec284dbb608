// libmysofa (AES69 SOFA reader): https://github.com/hoene/libmysofa, Debian package libmysofa-dev.
#include <mysofa.h>
