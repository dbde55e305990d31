import Glibc

/// Facts about the machine read once.
public enum SystemInfo {
    public static var onlineCores: Int { Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))) }
}
