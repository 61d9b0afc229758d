package serve

// ioctlInputQueue asks a terminal how many bytes wait to be read: FIONREAD,
// _IOR('f', 127, int) in <sys/filio.h>, which x/sys/unix does not name for
// darwin.
const ioctlInputQueue = 0x4004667f
