import Testing

@testable import PushHub

@Suite struct ResultStatisticsTests {
    typealias Statistics = ResultStatistics

    // Expected values: scipy 1.17.1, statsmodels 0.15.0; the Python expression above each.
    // Imports: numpy as np; from scipy import stats, special; from statsmodels.stats.proportion
    // import proportion_confint, confint_proportions_2indep; from statsmodels.stats.weightstats
    // import DescrStatsW, CompareMeans.

    /// (successes, trials, lower, upper)
    static let wilson: [(Int, Int, Double, Double)] = [
        // proportion_confint(33, 100, alpha=0.05, method="wilson")
        (33, 100, 0.2456312273412803, 0.42694656204909476),
        // proportion_confint(40, 100, alpha=0.05, method="wilson")
        (40, 100, 0.30940128643245896, 0.49799741320893826),
        // proportion_confint(0, 10, alpha=0.05, method="wilson")
        (0, 10, 0.0, 0.27753279986288926),
        // proportion_confint(10, 10, alpha=0.05, method="wilson")
        (10, 10, 0.7224672001371106, 1.0),
        // proportion_confint(1, 1, alpha=0.05, method="wilson")
        (1, 1, 0.2065493143772374, 1.0),
        // proportion_confint(0, 1, alpha=0.05, method="wilson")
        (0, 1, 0.0, 0.7934506856227627),
        // proportion_confint(5, 1000000, alpha=0.05, method="wilson")
        (5, 1000000, 2.1357029684685578e-06, 1.1705702681035748e-05),
        // proportion_confint(999999, 1000000, alpha=0.05, method="wilson")
        (999999, 1000000, 0.9999943350881957, 0.9999998234754233),
        // proportion_confint(1, 3, alpha=0.05, method="wilson")
        (1, 3, 0.06149194472039626, 0.7923403991979523),
        // proportion_confint(500000, 1000000, alpha=0.05, method="wilson")
        (500000, 1000000, 0.4990200198900048, 0.5009799801099952),
        // proportion_confint(12345, 67890, alpha=0.05, method="wilson")
        (12345, 67890, 0.17895489704038053, 0.18475764195033373),
    ]

    /// (control successes, trials, variant successes, trials, lower, upper) of variant − control
    static let wald: [(Int, Int, Int, Int, Double, Double)] = [
        (33, 100, 40, 100, -0.06309006958530233, 0.20309006958530235),
        // confint_proportions_2indep(40, 100, 33, 100, method="wald", compare="diff", alpha=0.05)
        (0, 10, 0, 10, 0.0, 0.0),
        // confint_proportions_2indep(0, 10, 0, 10, method="wald", compare="diff", alpha=0.05)
        (5, 7, 4, 9, -0.7360876647222905, 0.19640512503975072),
        // confint_proportions_2indep(4, 9, 5, 7, method="wald", compare="diff", alpha=0.05)
        (1, 1, 0, 3, -1.0, -1.0),
        // confint_proportions_2indep(0, 3, 1, 1, method="wald", compare="diff", alpha=0.05)
        (12000, 100000, 12500, 100200, 0.0018795038288305548, 0.007621494175161457),
        // confint_proportions_2indep(12500, 100200, 12000, 100000, method="wald", compare="diff", alpha=0.05)
        (2, 1000000, 9, 1000000, 4.9955997615272e-07, 1.350044002384728e-05),
        // confint_proportions_2indep(9, 1000000, 2, 1000000, method="wald", compare="diff", alpha=0.05)
    ]

    /// Each unit's total value of a goal event (0 without it), in Python as `a = [0, 0, 12.5, …]`.
    static let samples: [String: [Double]] = [
        "a": [0.0, 0.0, 12.5, 0.0, 3.0, 0.0, 0.0, 7.25],
        "b": [1.0, 2.0],
        "c": [0.1, 0.1, 0.1, 0.1, 0.1, 0.3],
        "d": [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 99.99],
        "e": (1...1000).map { Double($0) * 0.5 },  // e = [i * 0.5 for i in range(1, 1001)]
        "f": [-3.0, 4.5, 0.001, 2000.0, 7.0],
    ]

    /// (sample, mean, lower, upper)
    static let means: [(String, Double, Double, Double)] = [
        // stats.norm.interval(0.95, loc=np.mean(a), scale=stats.sem(a))
        ("a", 2.84375, -0.3971531218213338, 6.084653121821334),
        // stats.norm.interval(0.95, loc=np.mean(b), scale=stats.sem(b))
        ("b", 1.5, 0.520018007729973, 2.479981992270027),
        // stats.norm.interval(0.95, loc=np.mean(c), scale=stats.sem(c))
        ("c", 0.13333333333333333, 0.06800120051533153, 0.19866546615133512),
        // stats.norm.interval(0.95, loc=np.mean(d), scale=stats.sem(d))
        ("d", 9.998999999999999, -9.598679881416004, 29.596679881416),
        // stats.norm.interval(0.95, loc=np.mean(e), scale=stats.sem(e))
        ("e", 250.25, 241.2995574137425, 259.2004425862575),
        // stats.norm.interval(0.95, loc=np.mean(f), scale=stats.sem(f))
        ("f", 401.7002, -381.45969124470287, 1184.8600912447027),
    ]

    /// (control sample, variant sample, difference, lower, upper)
    static let welch: [(String, String, Double, Double, Double)] = [
        ("a", "d", 7.155249999999999, -12.70859931929078, 27.019099319290778),
        // np.mean(d) - np.mean(a); CompareMeans(DescrStatsW(d), DescrStatsW(a)).zconfint_diff(alpha=0.05, usevar="unequal")
        ("b", "a", 1.34375, -2.04207600707786, 4.72957600707786),
        // np.mean(a) - np.mean(b); CompareMeans(DescrStatsW(a), DescrStatsW(b)).zconfint_diff(alpha=0.05, usevar="unequal")
        ("c", "c", 0.0, -0.09239358828997851, 0.09239358828997851),
        // np.mean(c) - np.mean(c); CompareMeans(DescrStatsW(c), DescrStatsW(c)).zconfint_diff(alpha=0.05, usevar="unequal")
        ("e", "f", 151.4502, -631.7608352113948, 934.6612352113948),
        // np.mean(f) - np.mean(e); CompareMeans(DescrStatsW(f), DescrStatsW(e)).zconfint_diff(alpha=0.05, usevar="unequal")
    ]

    /// (observed, weights, chi-square, p-value); weight-0 variants left out of the Python call
    static let srm: [([Int], [Int], Double, Double)] = [
        ([100, 100], [1, 1], 0.0, 1.0),
        // stats.chisquare([100, 100], f_exp=[100.0, 100.0])
        ([97, 103], [1, 1], 0.18, 0.6713732405408727),
        // stats.chisquare([97, 103], f_exp=[100.0, 100.0])
        ([5000, 5200], [1, 1], 3.9215686274509802, 0.0476703806561615),
        // stats.chisquare([5000, 5200], f_exp=[5100.0, 5100.0])
        ([120, 190, 690], [1, 2, 7], 4.642857142857143, 0.09813329499921788),
        // stats.chisquare([120, 190, 690], f_exp=[100.0, 200.0, 700.0])
        ([448, 552], [1, 1], 10.816, 0.0010062665807906216),
        // stats.chisquare([448, 552], f_exp=[500.0, 500.0])
        ([447, 553], [1, 1], 11.236, 0.0008022586904386514),
        // stats.chisquare([447, 553], f_exp=[500.0, 500.0])
        ([1, 0], [1, 1], 1.0, 0.31731050786291115),
        // stats.chisquare([1, 0], f_exp=[0.5, 0.5])
        ([1000000000, 1000100000], [1, 1], 4.9997500124993755, 0.02535098001463615),
        // stats.chisquare([1000000000, 1000100000], f_exp=[1000050000.0, 1000050000.0])
        ([3, 50, 47], [0, 1, 1], 0.09278350515463918, 0.7606678877645499),
        // stats.chisquare([50, 47], f_exp=[48.5, 48.5])
        ([10, 20, 30, 40], [4, 3, 2, 1], 120.83333333333333, 5.104568825187915e-26),
        // stats.chisquare([10, 20, 30, 40], f_exp=[40.0, 30.0, 20.0, 10.0])
        ([1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0], [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1], 1.0, 0.9998278843700441),
        // stats.chisquare([1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0], f_exp=[0.9090909090909091, 0.9090909090909091, 0.9090909090909091, 0.9090909090909091, 0.9090909090909091, 0.9090909090909091, 0.9090909090909091, 0.9090909090909091, 0.9090909090909091, 0.9090909090909091, 0.9090909090909091])
    ]

    /// (x, degrees of freedom, survival)
    static let chiSquare: [(Double, Int, Double)] = [
        // stats.chi2.sf(0.001, 1)
        (0.001, 1, 0.9747728793699604),
        // stats.chi2.sf(0.5, 1)
        (0.5, 1, 0.47950012218695337),
        // stats.chi2.sf(1.0, 1)
        (1.0, 1, 0.31731050786291115),
        // stats.chi2.sf(3.841458820694124, 1)
        (3.841458820694124, 1, 0.04999999999999989),
        // stats.chi2.sf(10.827566170662733, 1)
        (10.827566170662733, 1, 0.0010000000000000007),
        // stats.chi2.sf(20.0, 1)
        (20.0, 1, 7.744216431044088e-06),
        // stats.chi2.sf(50.0, 1)
        (50.0, 1, 1.537459794428033e-12),
        // stats.chi2.sf(100.0, 1)
        (100.0, 1, 1.5239706048320995e-23),
        // stats.chi2.sf(300.0, 1)
        (300.0, 1, 3.2943623833139784e-67),
        // stats.chi2.sf(700.0, 1)
        (700.0, 1, 2.990226975124623e-154),
        // stats.chi2.sf(1300.0, 1)
        (1300.0, 1, 1.1303728441493301e-284),
        // stats.chi2.sf(0.001, 2)
        (0.001, 2, 0.9995001249791693),
        // stats.chi2.sf(0.5, 2)
        (0.5, 2, 0.7788007830714049),
        // stats.chi2.sf(1.0, 2)
        (1.0, 2, 0.6065306597126334),
        // stats.chi2.sf(3.841458820694124, 2)
        (3.841458820694124, 2, 0.1465000644860843),
        // stats.chi2.sf(10.827566170662733, 2)
        (10.827566170662733, 2, 0.004454755573008814),
        // stats.chi2.sf(20.0, 2)
        (20.0, 2, 4.539992976248486e-05),
        // stats.chi2.sf(50.0, 2)
        (50.0, 2, 1.3887943864964e-11),
        // stats.chi2.sf(100.0, 2)
        (100.0, 2, 1.9287498479639183e-22),
        // stats.chi2.sf(300.0, 2)
        (300.0, 2, 7.175095973164448e-66),
        // stats.chi2.sf(700.0, 2)
        (700.0, 2, 9.929590396265143e-153),
        // stats.chi2.sf(1300.0, 2)
        (1300.0, 2, 5.111951948651156e-283),
        // stats.chi2.sf(0.001, 3)
        (0.001, 3, 0.9999915920809419),
        // stats.chi2.sf(0.5, 3)
        (0.5, 3, 0.9188914116546758),
        // stats.chi2.sf(1.0, 3)
        (1.0, 3, 0.8012519569012009),
        // stats.chi2.sf(3.841458820694124, 3)
        (3.841458820694124, 3, 0.27910046378359765),
        // stats.chi2.sf(10.827566170662733, 3)
        (10.827566170662733, 3, 0.012695784687026122),
        // stats.chi2.sf(20.0, 3)
        (20.0, 3, 0.00016974243555282632),
        // stats.chi2.sf(50.0, 3)
        (50.0, 3, 7.989179244951495e-11),
        // stats.chi2.sf(100.0, 3)
        (100.0, 3, 1.5541594313896026e-21),
        // stats.chi2.sf(300.0, 3)
        (300.0, 3, 9.948758346327588e-65),
        // stats.chi2.sf(700.0, 3)
        (700.0, 3, 2.0991308534204487e-151),
        // stats.chi2.sf(1300.0, 3)
        (1300.0, 3, 1.4717437106980018e-281),
        // stats.chi2.sf(0.001, 4)
        (0.001, 4, 0.9999998750416589),
        // stats.chi2.sf(0.5, 4)
        (0.5, 4, 0.9735009788392561),
        // stats.chi2.sf(1.0, 4)
        (1.0, 4, 0.9097959895689501),
        // stats.chi2.sf(3.841458820694124, 4)
        (3.841458820694124, 4, 0.42788704696224755),
        // stats.chi2.sf(10.827566170662733, 4)
        (10.827566170662733, 4, 0.02857183594344958),
        // stats.chi2.sf(20.0, 4)
        (20.0, 4, 0.0004993992273873336),
        // stats.chi2.sf(50.0, 4)
        (50.0, 4, 3.610865404890647e-10),
        // stats.chi2.sf(100.0, 4)
        (100.0, 4, 9.836624224615988e-21),
        // stats.chi2.sf(300.0, 4)
        (300.0, 4, 1.083439491947837e-63),
        // stats.chi2.sf(700.0, 4)
        (700.0, 4, 3.4852862290889247e-150),
        // stats.chi2.sf(1300.0, 4)
        (1300.0, 4, 3.327880718571902e-280),
        // stats.chi2.sf(0.001, 5)
        (0.001, 5, 0.9999999983185123),
        // stats.chi2.sf(0.5, 5)
        (0.5, 5, 0.9921232932326296),
        // stats.chi2.sf(1.0, 5)
        (1.0, 5, 0.9625657732472964),
        // stats.chi2.sf(3.841458820694124, 5)
        (3.841458820694124, 5, 0.5724604629258029),
        // stats.chi2.sf(10.827566170662733, 5)
        (10.827566170662733, 5, 0.0549080788925593),
        // stats.chi2.sf(20.0, 5)
        (20.0, 5, 0.0012497305630313773),
        // stats.chi2.sf(50.0, 5)
        (50.0, 5, 1.3857973367009573e-09),
        // stats.chi2.sf(100.0, 5)
        (100.0, 5, 5.285148360943219e-20),
        // stats.chi2.sf(300.0, 5)
        (300.0, 5, 1.0015302305957817e-62),
        // stats.chi2.sf(700.0, 5)
        (700.0, 5, 4.911986103573117e-149),
        // stats.chi2.sf(1300.0, 5)
        (1300.0, 5, 6.3873752344737004e-279),
        // stats.chi2.sf(0.001, 6)
        (0.001, 6, 0.9999999999791744),
        // stats.chi2.sf(0.5, 6)
        (0.5, 6, 0.9978385033102375),
        // stats.chi2.sf(1.0, 6)
        (1.0, 6, 0.9856123220330293),
        // stats.chi2.sf(3.841458820694124, 6)
        (3.841458820694124, 6, 0.6981211734276376),
        // stats.chi2.sf(10.827566170662733, 6)
        (10.827566170662733, 6, 0.0938541568319842),
        // stats.chi2.sf(20.0, 6)
        (20.0, 6, 0.0027693957155115775),
        // stats.chi2.sf(50.0, 6)
        (50.0, 6, 4.701068998290324e-09),
        // stats.chi2.sf(100.0, 6)
        (100.0, 6, 2.509303552201055e-19),
        // stats.chi2.sf(300.0, 6)
        (300.0, 6, 8.180326919004622e-62),
        // stats.chi2.sf(700.0, 6)
        (700.0, 6, 6.116726980003133e-148),
        // stats.chi2.sf(1300.0, 6)
        (1300.0, 6, 1.0832277298711879e-277),
        // stats.chi2.sf(0.001, 7)
        (0.001, 7, 0.9999999999997597),
        // stats.chi2.sf(0.5, 7)
        (0.5, 7, 0.9994464813904249),
        // stats.chi2.sf(1.0, 7)
        (1.0, 7, 0.9948285365165155),
        // stats.chi2.sf(3.841458820694124, 7)
        (3.841458820694124, 7, 0.7978465341945319),
        // stats.chi2.sf(10.827566170662733, 7)
        (10.827566170662733, 7, 0.1463193606377377),
        // stats.chi2.sf(20.0, 7)
        (20.0, 7, 0.005569683072945574),
        // stats.chi2.sf(50.0, 7)
        (50.0, 7, 1.4444852779215397e-08),
        // stats.chi2.sf(100.0, 7)
        (100.0, 7, 1.0787979671702833e-18),
        // stats.chi2.sf(300.0, 7)
        (300.0, 7, 6.0496418565564134e-61),
        // stats.chi2.sf(700.0, 7)
        (700.0, 7, 6.896512574090415e-147),
        // stats.chi2.sf(1300.0, 7)
        (1300.0, 7, 1.663278402549843e-276),
        // stats.chi2.sf(0.001, 8)
        (0.001, 8, 0.9999999999999974),
        // stats.chi2.sf(0.5, 8)
        (0.5, 8, 0.999866630349486),
        // stats.chi2.sf(1.0, 8)
        (1.0, 8, 0.9982483774437092),
        // stats.chi2.sf(3.841458820694124, 8)
        (3.841458820694124, 8, 0.8711367182214784),
        // stats.chi2.sf(10.827566170662733, 8)
        (10.827566170662733, 8, 0.21166226503115862),
        // stats.chi2.sf(20.0, 8)
        (20.0, 8, 0.010336050675925726),
        // stats.chi2.sf(50.0, 8)
        (50.0, 8, 4.0867589479967445e-08),
        // stats.chi2.sf(100.0, 8)
        (100.0, 8, 4.269159205144943e-18),
        // stats.chi2.sf(300.0, 8)
        (300.0, 8, 4.117794754094997e-60),
        // stats.chi2.sf(700.0, 8)
        (700.0, 8, 7.156687073797783e-146),
        // stats.chi2.sf(1300.0, 8)
        (1300.0, 8, 2.3506152837959182e-275),
        // stats.chi2.sf(0.001, 9)
        (0.001, 9, 1.0),
        // stats.chi2.sf(0.5, 9)
        (0.5, 9, 0.9999695662588389),
        // stats.chi2.sf(1.0, 9)
        (1.0, 9, 0.9994375026978325),
        // stats.chi2.sf(3.841458820694124, 9)
        (3.841458820694124, 9, 0.9215338644140824),
        // stats.chi2.sf(10.827566170662733, 9)
        (10.827566170662733, 9, 0.28771388947216864),
        // stats.chi2.sf(20.0, 9)
        (20.0, 9, 0.017912404529843298),
        // stats.chi2.sf(50.0, 9)
        (50.0, 9, 1.0772382022574693e-07),
        // stats.chi2.sf(100.0, 9)
        (100.0, 9, 1.5735176303753876e-17),
        // stats.chi2.sf(300.0, 9)
        (300.0, 9, 2.6102773472069844e-59),
        // stats.chi2.sf(700.0, 9)
        (700.0, 9, 6.916357838795454e-145),
        // stats.chi2.sf(1300.0, 9)
        (1300.0, 9, 3.0937161204682167e-274),
        // stats.chi2.sf(0.001, 10)
        (0.001, 10, 1.0),
        // stats.chi2.sf(0.5, 10)
        (0.5, 10, 0.999993388289439),
        // stats.chi2.sf(1.0, 10)
        (1.0, 10, 0.9998278843700441),
        // stats.chi2.sf(3.841458820694124, 10)
        (3.841458820694124, 10, 0.9542157295546657),
        // stats.chi2.sf(10.827566170662733, 10)
        (10.827566170662733, 10, 0.3711091509020533),
        // stats.chi2.sf(20.0, 10)
        (20.0, 10, 0.029252688076961124),
        // stats.chi2.sf(50.0, 10)
        (50.0, 10, 2.669083424904495e-07),
        // stats.chi2.sf(100.0, 10)
        (100.0, 10, 5.4497019829205215e-17),
        // stats.chi2.sf(300.0, 10)
        (300.0, 10, 1.5546747543803087e-58),
        // stats.chi2.sf(700.0, 10)
        (700.0, 10, 6.280146699235733e-144),
        // stats.chi2.sf(1300.0, 10)
        (1300.0, 10, 3.825653538395905e-273),
    ]

    /// (a, x, Q(a, x))
    static let upperGamma: [(Double, Double, Double)] = [
        // special.gammaincc(0.1, 0.01)
        (0.1, 0.01, 0.3373787400455204),
        // special.gammaincc(0.5, 1e-10)
        (0.5, 1e-10, 0.9999887162083294),
        // special.gammaincc(3.7, 2.0)
        (3.7, 2.0, 0.8137253291109461),
        // special.gammaincc(5.0, 5.999)
        (5.0, 5.999, 0.28519037524294044),
        // special.gammaincc(5.0, 6.001)
        (5.0, 6.001, 0.28492267000786026),
        // special.gammaincc(50.0, 45.0)
        (50.0, 45.0, 0.7531979655998298),
        // special.gammaincc(200.0, 230.0)
        (200.0, 230.0, 0.020331143328836242),
        // special.gammaincc(1000.0, 1000.0)
        (1000.0, 1000.0, 0.4957947558197845),
        // special.gammaincc(1000.0, 900.0)
        (1000.0, 900.0, 0.9994500977342882),
        // special.gammaincc(2.5, 80.0)
        (2.5, 80.0, 9.898229019203821e-33),
    ]

    /// Within 1e-9 relative, or 1e-15 absolute where the reference is exactly 0.
    static func isClose(_ value: Double, _ expected: Double) -> Bool {
        if expected == 0 { return abs(value) <= 1e-15 }
        return abs(value - expected) <= 1e-9 * abs(expected)
    }

    static func isClose(_ interval: ClosedRange<Double>?, _ lower: Double, _ upper: Double) -> Bool {
        guard let interval else { return false }
        return isClose(interval.lowerBound, lower) && isClose(interval.upperBound, upper)
    }

    @Test("the Wilson score interval matches statsmodels", arguments: wilson)
    func wilsonInterval(_ example: (Int, Int, Double, Double)) {
        let (successes, trials, lower, upper) = example
        let interval = Statistics.wilson(successes: successes, trials: trials)
        #expect(Self.isClose(interval, lower, upper), "\(String(describing: interval))")
        let rate = Statistics.rate(Statistics.Proportion(successes: successes, trials: trials))
        #expect(rate?.value == Double(successes) / Double(trials))
        #expect(rate?.interval == interval)
        #expect(interval.map { 0 <= $0.lowerBound && $0.upperBound <= 1 } == true)
    }

    @Test("with no trials a rate, its interval and its differences are nil")
    func noTrials() {
        let empty = Statistics.Proportion(successes: 0, trials: 0)
        let some = Statistics.Proportion(successes: 1, trials: 2)
        #expect(Statistics.wilson(successes: 0, trials: 0) == nil)
        #expect(Statistics.rate(empty) == nil)
        #expect(Statistics.rateDifference(control: empty, variant: some) == nil)
        #expect(Statistics.rateDifference(control: some, variant: empty) == nil)
    }

    @Test("the Wald interval of variant − control matches statsmodels", arguments: wald)
    func waldDifference(_ example: (Int, Int, Int, Int, Double, Double)) {
        let (s1, n1, s2, n2, lower, upper) = example
        let difference = Statistics.rateDifference(
            control: Statistics.Proportion(successes: s1, trials: n1),
            variant: Statistics.Proportion(successes: s2, trials: n2))
        #expect(difference.map { Self.isClose($0.value, Double(s2) / Double(n2) - Double(s1) / Double(n1)) } == true)
        #expect(Self.isClose(difference?.interval, lower, upper), "\(String(describing: difference))")
    }

    @Test("the mean's normal interval from (n, Σx, Σx²) with n − 1 matches scipy", arguments: means)
    func meanInterval(_ example: (String, Double, Double, Double)) throws {
        let (name, mean, lower, upper) = example
        let moments = Statistics.Moments(values: try #require(Self.samples[name]))
        let estimate = try #require(Statistics.mean(moments))
        #expect(Self.isClose(estimate.value, mean))
        #expect(Self.isClose(estimate.interval, lower, upper), "\(String(describing: estimate.interval))")
        let interval = Statistics.meanInterval(n: moments.n, sum: moments.sum, sumOfSquares: moments.sumOfSquares)
        #expect(interval == estimate.interval)
    }

    @Test("a mean needs one value and its interval two")
    func meanNeedsValues() {
        #expect(Statistics.mean(Statistics.Moments()) == nil)
        #expect(Statistics.meanInterval(n: 0, sum: 0, sumOfSquares: 0) == nil)
        #expect(Statistics.mean(Statistics.Moments(values: [4.5])) == Statistics.Estimate(value: 4.5, interval: nil))
        #expect(Statistics.meanInterval(n: 1, sum: 4.5, sumOfSquares: 20.25) == nil)
        #expect(Statistics.meanInterval(n: 2, sum: 3, sumOfSquares: 5) != nil)
    }

    @Test("equal values: the variance rounds to no less than 0 and the interval is the mean")
    func equalValues() throws {
        for (value, count) in [(0.1, 7), (1e6 + 0.1, 3), (12.5, 1000), (0.0, 5)] {
            let moments = Statistics.Moments(values: Array(repeating: value, count: count))
            let variance = try #require(moments.sampleVariance)
            #expect(variance >= 0 && variance <= 1e-12 * max(1, value * value), "\(value) × \(count): \(variance)")
            let interval = try #require(Statistics.mean(moments)?.interval)
            #expect(abs(interval.upperBound - interval.lowerBound) <= 1e-6 * max(1, value))
        }
    }

    @Test("the Welch/normal interval of variant − control matches statsmodels", arguments: welch)
    func welchDifference(_ example: (String, String, Double, Double, Double)) throws {
        let (control, variant, value, lower, upper) = example
        let controlValues = try #require(Self.samples[control]), variantValues = try #require(Self.samples[variant])
        let difference = try #require(
            Statistics.meanDifference(
                control: Statistics.Moments(values: controlValues), variant: Statistics.Moments(values: variantValues)))
        #expect(Self.isClose(difference.value, value))
        #expect(Self.isClose(difference.interval, lower, upper), "\(String(describing: difference.interval))")
    }

    @Test("a difference of means needs a value on each side, its interval two")
    func meanDifferenceNeedsValues() {
        let one = Statistics.Moments(values: [3]), two = Statistics.Moments(values: [1, 2])
        #expect(Statistics.meanDifference(control: Statistics.Moments(), variant: two) == nil)
        #expect(Statistics.meanDifference(control: two, variant: Statistics.Moments()) == nil)
        #expect(Statistics.meanDifference(control: two, variant: one) == Statistics.Estimate(value: 1.5, interval: nil))
        #expect(Statistics.meanDifference(control: one, variant: two)?.interval == nil)
    }

    @Test("the sample-ratio check matches scipy's chi-square test", arguments: srm)
    func sampleRatio(_ example: ([Int], [Int], Double, Double)) throws {
        let (observed, weights, chiSquare, pValue) = example
        let check = try #require(Statistics.sampleRatioMismatch(observed: observed, weights: weights))
        #expect(Self.isClose(check.chiSquare, chiSquare))
        #expect(Self.isClose(check.pValue, pValue), "\(check.pValue)")
        #expect(check.degreesOfFreedom == weights.filter { $0 > 0 }.count - 1)
        #expect(check.mismatch == (pValue < 0.001))
    }

    @Test("a mismatch is flagged just under p = 0.001, not just over")
    func mismatchThreshold() {
        #expect(Statistics.sampleRatioMismatch(observed: [448, 552], weights: [1, 1])?.mismatch == false)
        #expect(Statistics.sampleRatioMismatch(observed: [447, 553], weights: [1, 1])?.mismatch == true)
    }

    @Test("no sample-ratio check with fewer than two weighted variants or no units among them")
    func sampleRatioNeedsTwo() {
        #expect(Statistics.sampleRatioMismatch(observed: [], weights: []) == nil)
        #expect(Statistics.sampleRatioMismatch(observed: [50], weights: [1]) == nil)
        #expect(Statistics.sampleRatioMismatch(observed: [50, 7], weights: [1, 0]) == nil)
        #expect(Statistics.sampleRatioMismatch(observed: [0, 0], weights: [1, 1]) == nil)
        #expect(Statistics.sampleRatioMismatch(observed: [9, 0, 0], weights: [0, 1, 1]) == nil)
    }

    @Test("the chi-square survival function matches scipy", arguments: chiSquare)
    func chiSquareSurvival(_ example: (Double, Int, Double)) {
        let (x, degreesOfFreedom, expected) = example
        let survival = Statistics.chiSquareSurvival(x, degreesOfFreedom: degreesOfFreedom)
        #expect(Self.isClose(survival, expected), "\(survival)")
    }

    @Test("the regularized upper incomplete gamma function matches scipy", arguments: upperGamma)
    func regularizedUpperGamma(_ example: (Double, Double, Double)) {
        let (a, x, expected) = example
        let q = Statistics.regularizedUpperGamma(a, x)
        #expect(Self.isClose(q, expected), "\(q)")
    }

    @Test("Q(a, 0) is 1, Q(a, ∞) is 0, and the series and the continued fraction meet at x = a + 1")
    func upperGammaEdges() {
        for a in [0.5, 1, 1.5, 2.5, 5, 17.5, 100, 1000] {
            #expect(Statistics.regularizedUpperGamma(a, 0) == 1)
            #expect(Statistics.regularizedUpperGamma(a, .infinity) == 0)
            let below = Statistics.regularizedUpperGamma(a, (a + 1).nextDown)
            let above = Statistics.regularizedUpperGamma(a, a + 1)
            // Both carry e^(−x + a·ln x − lnΓ(a)), whose rounding grows with a (about a · 1e-15).
            #expect(abs(below - above) <= max(1e-12, 2e-15 * a) * above, "a = \(a): \(below) vs \(above)")
        }
        #expect(Statistics.chiSquareSurvival(1e6, degreesOfFreedom: 3) == 0)
    }
}
