import Foundation
import PushHub

// Raw client-token verifications per second on one core (issue 31, DESIGN §18), for each of
// HS256, RS256, ES256 and EdDSA: `JWTVerifier.verify` (split, base64url, header JSON, the key's
// signature check through OpenSSL, payload JSON, exp) in a loop on this thread, over tokens
// minted by PyJWT (bench/tokens/run.py writes them), the verifier holding every key the bench hub
// holds (one per algorithm, no kid).
//
//     tokens-bench DIR [SECONDS [ALG]]
//
// DIR holds `hs256.secret`, `rs256.pem`, `es256.pem`, `eddsa.pem` (public keys) and
// `tokens-<alg>.txt` (one token a line). Prints one line per algorithm: verifications/s, µs each
// and the ratio to HS256 (ALG: that algorithm alone, for a profile). A token that does not verify
// ends the run (exit 1).

let algorithms = ["hs256", "rs256", "es256", "eddsa"]

func lines(_ path: String) -> [String] {
    guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
        print("tokens-bench: cannot read \(path)")
        exit(1)
    }
    return text.split(separator: "\n").map(String.init)
}

guard CommandLine.arguments.count >= 2 else {
    print("usage: tokens-bench DIR [SECONDS [ALG]]")
    exit(2)
}
let folder = CommandLine.arguments[1]
let seconds = CommandLine.arguments.count > 2 ? Double(CommandLine.arguments[2]) ?? 1 : 1
var keys = [JWTKey(secret: Array(lines(folder + "/hs256.secret")[0].utf8))]
for name in algorithms.dropFirst() {
    do {
        keys.append(try JWTKey(publicKeyFile: "\(folder)/\(name).pem"))
    } catch {
        print("tokens-bench: \(name).pem: \(error)")
        exit(1)
    }
}
let verifier = JWTVerifier(keys: JWTKeyStore(JWTKeySet(configured: keys)), requireExpiry: true)
let now = Int(Date().timeIntervalSince1970)  // the tokens last an hour
let clock = ContinuousClock()

var hs256Rate = 0.0
let only = CommandLine.arguments.count > 3 ? CommandLine.arguments[3] : nil
for name in algorithms where only == nil || only == name {
    let tokens = Array(lines("\(folder)/tokens-\(name).txt").prefix(1000))
    for token in tokens {
        do {
            _ = try verifier.verify(token, now: now)
        } catch {
            print("tokens-bench: a \(name) token was refused: \(error)")
            exit(1)
        }
    }
    // Every token verified above; the subjects' lengths are summed so the work is not optimised away.
    var count = 0
    var checksum = 0
    let start = clock.now
    var elapsed = Duration.zero
    repeat {
        for token in tokens {
            if let claims = try? verifier.verify(token, now: now) { checksum &+= claims.subject.utf8.count }
        }
        count += tokens.count
        elapsed = clock.now - start
    } while elapsed < .seconds(seconds)
    let took = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    let rate = Double(count) / took
    if name == "hs256" { hs256Rate = rate }
    let figures = String(
        format: "%.0f verifications/s on one core, %.2f µs each (%d in %.2f s, checksum %d)", rate, 1e6 / rate, count,
        took, checksum)
    let ratio = hs256Rate > 0 ? String(format: "; %.3f × HS256", rate / hs256Rate) : ""
    print("verify \(name): \(figures)\(ratio)")
}
