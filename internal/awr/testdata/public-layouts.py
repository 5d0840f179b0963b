#!/usr/bin/env python3
"""Writes the fixtures named *-public-layout-*.html: awrrpt HTML reports in
the exact markup of public 11.2.0.4, 12.2.0.1 and 19c reports (the
repository pcambell/awrrptanalyzor, folder awrrpt/, read for its layout
only: its reports carry no licence, so none is copied). Tags, classes,
summary attributes, titles, notes and column headings are Oracle's as
those reports print them; every value is ours, except the figures issue 34
quotes from them and the tests assert (gc blocks lost 96, 21 and 42,379;
the 12.2 report's gc wait counts, congestion 1.9 %; a ping target counted 0
times; DB ids 1971498938, 2028335103, 1882826147 and 4102709851).

Run from this directory: python3 public-layouts.py
"""


def td(v, cls, first=False, right=True):
    v = "&#160;" if v == "" else v
    if first:
        return f"<td scope=\"row\" class='{cls}'>{v}</td>"
    a = ' align="right"' if right else ""
    return f"<td{a} class='{cls}'>{v}</td>"


def rows(data, first_scope=True, right_first=False):
    out = []
    for i, r in enumerate(data):
        cls = "awrc" if i % 2 == 0 else "awrnc"
        cells = [td(r[0], cls, first=first_scope) if not right_first else td(r[0], cls)]
        cells += [td(v, cls) for v in r[1:]]
        out.append("<tr>" + "".join(cells) + "</tr>")
    return "\n".join(out)


def th(cols, nobg_first=False):
    h = []
    for i, c in enumerate(cols):
        cls = "awrnobg" if nobg_first and i == 0 else "awrbg"
        h.append(f'<th class="{cls}" scope="col">{c}</th>')
    return "<tr>" + "".join(h) + "</tr>"


def table(summary, head, body, width=True):
    w = ' width="600"' if width else ""
    return f'<table border="0"{w} class="tdiff" summary="{summary}">{head}\n{body}\n</table><p />\n'


def h3(title, notes=(), name=None):
    a = f'<a class="awr" name="{name}"></a>\n' if name else ""
    ul = "<ul>\n" + "".join(f'<li class="awr"> {n}</li>\n' for n in notes) + "</ul>\n"
    return f'{a}<h3 class="awr">{title}</h3>\n{ul}'


def back():
    return '<hr align="left" width="20%" /><p />\n<br /><a class="awr" href="#top">Back to Top</a><p />\n'


def no_data(title, name):
    return f'<a class="awr" name="{name}"></a>\n<h3 class="awr">{title}</h3>\n\n<p />\n                  No data exists for this section of the report.\n<p />\n'


def header(r):
    out = f'<html lang="en"><head><title>AWR Report for DB: {r["db"]}, Inst: {r["inst"]}, Snaps: {r["b"]}-{r["e"]}</title>\n</head><body class="awr">\n<h1 class="awr">\n{r["title"]}\n\n</h1>\n<p />\n'
    if r["rel"].startswith("11."):
        out += table("This table displays database instance information",
                     th(["DB Name", "DB Id", "Instance", "Inst num", "Startup Time", "Release", "RAC"]),
                     rows([[r["db"], r["id"], r["inst"], "1", "04-Jan-25 18:12", r["rel"], "YES"]]))
    else:
        out += table("This table displays database instance information",
                     th(["DB Name", "DB Id", "Unique Name", "Role", "Edition", "Release", "RAC", "CDB"]),
                     rows([[r["db"], r["id"], r["db"].lower(), "PRIMARY", "EE", r["rel"], "YES", "YES"]]))
        out += "<p />\n" + table("This table displays database instance information",
                                 th(["Instance", "Inst Num", "Startup Time"]), rows([[r["inst"], "1", "04-Jan-25 18:12"]]), width=False)
    out += "<p />\n" + table("This table displays host information",
                             th(["Host Name", "Platform", "CPUs", "Cores", "Sockets", "Memory (GB)"]),
                             rows([[r["host"], "Linux x86 64-bit", "  32", "  16", "   2", "  251.57"]]))
    out += table("This table displays snapshot information",
                 th(["", "Snap Id", "Snap Time", "Sessions", "Cursors/Session", "Instances"], nobg_first=True),
                 rows([["Begin Snap:", r["b"], r["bt"], "812", "      2.1", "2"],
                       ["End Snap:", r["e"], r["et"], "809", "      2.2", "2"],
                       ["Elapsed:", "", "60.02 (mins)", "", "", ""],
                       ["DB Time:", "", r["dbtime"] + " (mins)", "", "", ""]]))
    return out


def load(r):
    return "<p />Load Profile<p />\n" + table("This table displays load profile",
                                             th(["", "Per Second", "Per Transaction", "Per Exec", "Per Call"], nobg_first=True),
                                             rows(r["load"]))


def fg_waits(r):
    return h3("Foreground Wait Events", ["s  - second, ms - millisecond, us - microsecond, ns - nanosecond ",
                                         "Only events with Total Wait Time (s) &gt;= .001 are shown ",
                                         "ordered by wait time desc, waits desc (idle events last) ",
                                         "%Timeouts: value of 0 indicates value was &lt; .5%.  Value of null is truly 0"], "21") + \
        table("This table displays Foreground Wait Events and their wait statistics",
              th(["Event", "Waits", "%Time -outs", "Total Wait Time (s)", "Avg wait", "Waits /txn", "% DB time"]),
              rows(r["fg"]), width=False) + back()


def activity(r):
    cols = th(["Statistic", "Total", "per Second", "per Trans"])
    out = h3("Key Instance Activity Stats", ["Ordered by statistic name"], "1200") + \
        table("This table displays Key Instance activity statistics. For each instance, activity total, activity per second, and activity per transaction are displayed",
              cols, rows([["db block changes", "4,512,330", "1,253.01", "3.12"], ["execute count", "9,804,113", "2,722.47", "6.78"]]), width=False) + back()
    title, summ = "Instance Activity Stats", "This table displays Instance activity statistics. For each instance, activity total, activity per second, and activity per transaction are displayed"
    if r["rel"].startswith("11."):
        title, summ = "Other Instance Activity Stats", "This table displays non-key Instance activity statistics. For each instance, activity total, activity per second, and activity per transaction are displayed"
    out += h3(title, ["Ordered by statistic name"], "1250") + table(summ, cols, rows(r["activity"]), width=False) + back()
    out += h3("Instance Activity Stats - Absolute Values", ["Statistics with absolute values (should not be diffed)"], "1300") + \
        table("This table displays absolute values of instance-related features. For each instance, activity begin value and end value are displayed",
              th(["Statistic", "Begin Value", "End Value"]), rows([["logons current", "812", "809"], ["opened cursors current", "1,702", "1,778"]]), width=False) + back()
    return out


def rac(r):
    us = not r["rel"].startswith("11.")
    u = "us" if us else "ms"
    out = '<a class="awr" name="9997"></a><h3 class="awr">RAC Statistics</h3>\n<p />\n' + \
        table("This table displays information about RAC instances", th(["", "Begin", "End", ""], nobg_first=True),
              rows([["Number of Instances:", "    2", "    2"]]))
    out += "Global Cache Load Profile\n<p />\n" + table("This table displays information about global cache load\n                     profile",
                                                       th(["", "Per Second", "Per Transaction"], nobg_first=True), rows(r["gcload"]))
    out += "Global Cache Efficiency Percentages (Target local+remote 100%)\n<p />\n" + \
        table("This table displays global cache efficiency percentages", "", rows(r["gceff"]))
    out += "Global Cache and Enqueue Services - Workload Characteristics\n<p />\n" + \
        table("This table displays workload characteristics for global\n                    cache and enqueue services", "",
              rows([[f"Avg global cache cr block receive time ({u}):", r["cr"]],
                    [f"Avg global cache current block receive time ({u}):", r["cur"]]]))
    return out


def pings(r):
    # 11.2.0.4 and 19c print the same notes but for the unit (11.2.0.4:
    # "miliseconds", as printed) and the title.
    unit, t = ("microseconds", "Interconnect Ping Latency Statistics")
    if r["rel"].startswith("11."):
        unit, t = ("miliseconds", "Interconnect Ping Latency Stats")
    notes = ["Ping latency of the roundtrip of a message from this instance to ", "target instances.  ",
             "The target instance is identified by an instance number. ",
             f"Average and standard deviation of ping latency is given in {unit} ", "for message sizes of 500 bytes and 8K. ",
             "Note that latency of a message from the instance to itself is used as ", "control, since message latency can include wait for CPU"]
    s = "This table displays IC ping latency statistics"
    out = h3(t, notes, "7800") + table(s, th(["Target Instance", "500B Ping Count", "Avg Latency 500B msg", "Stddev 500B msg",
                                              "8K Ping Count", "Avg Latency 8K msg", "Stddev 8K msg"]),
                                       rows(r["pings"], first_scope=False, right_first=True), width=False) + back()
    out += h3("Interconnect Throughput by Client", ["Throughput of interconnect usage by major consumers ",
                                                    "All throughput numbers are megabytes per second"], "7900") + \
        table("This table displays Interconnect throughput by client statistics", th(["Used By", "Send Mbytes/sec", "Receive Mbytes/sec"]),
              rows(r["clients"]), width=False) + back()
    out += h3("Interconnect Device Statistics", ["Throughput and errors of interconnect devices (at OS level) ",
                                                 "All throughput numbers are megabytes per second"], "8000") + \
        table("This table displays Interconnect device statistics. IP address, public, source, etc. are displayed for each device",
              th(["Device Name", "IP Address", "Public", "Source", "Send Mbytes/sec", "Send Errors", "Send Dropped", "Send Buffer Overrun",
                  "Send Carrier Lost", "Receive Mbytes/sec", "Receive Errors", "Receive Dropped", "Receive Buffer Overrun", "Receive Frame Errors"]),
              rows(r["devices"]), width=False) + back()
    if r["rel"].startswith("11."):
        out += no_data("Dynamic Remastering Stats", "8790")
    else:
        out += h3("Dynamic Remastering Statistics", ["Times are in seconds ", "Affinity objects - Affinity objects mastered at the begin/end snapshot ",
                                                     "Read-mostly objects - Read-mostly objects mastered at the begin/end snapshot"], "8790") + \
            table("Dynamic Remastering Statistics. . Times are in seconds.", th(["Name", "Total", "per Remaster Op", "Begin Snap", "End Snap"]),
                  rows([["affinity objects", "", "", "12", "12"], ["read-mostly objects", "", "", "1", "1"]]), width=False)
    return out


def report(r, cluster=True):
    out = header(r) + load(r) + fg_waits(r) + activity(r)
    if cluster:
        out += rac(r) + pings(r)
    else:
        out += h3("Activity Over Time", ["Analysis period is divided into smaller time slots "], "99992") + \
            table("This table displays top events in different time slots", th(["Slot Time (Duration)", "Slot Count", "Event", "Event Count", "% Event"]),
                  rows([["10:00:09   (5.0 min)", "5,102", "gc buffer busy acquire", "3,870", "3.05"]]), width=False)
    return out + "<br /><a class=\"awr\" href=\"#top\">Back to Top</a><p />\n<p />\n<p />\nEnd of Report\n</body></html>\n"


LOAD19 = [["DB Time(s):", "               4.1", "               0.4", "      0.00", "      0.00"],
          ["DB CPU(s):", "               2.2", "               0.2", "      0.00", "      0.00"],
          ["Transactions:", "              10.4", "", "", ""],
          ["Executes (SQL):", "           2,722.5", "             261.8", "", ""],
          ["User calls:", "           4,101.9", "             394.4", "", ""]]
DEV19 = [["eno1:1", "169.254.8.148", "NO", "", "0.00", "0", "0", "0", "0", "0.00", "0", "0", "0", "0"],
         ["eno2:1", "169.254.22.76", "NO", "", "0.00", "0", "0", "0", "0", "0.00", "0", "0", "0", "0"]]
CLIENTS = [["Global Cache", "0.91", "0.88"], ["Parallel Query", "0.01", "0.01"], ["DB Locks", "0.12", "0.12"], ["Other", "0.00", "0.03"]]


def xydb19(b, e, lost, cr, pings, fg):
    return dict(title="WORKLOAD REPOSITORY report for", db="XYDB", id="1971498938", rel="19.0.0.0.0", inst="xydb1", host="racnode1",
                b=b, e=e, bt="20-Jan-25 15:00:04", et="20-Jan-25 16:00:03", dbtime="246.11", load=LOAD19, fg=fg,
                activity=[["gc blocks compressed", "38,114", "10.58", "1.02"], ["gc blocks lost", lost, "0.01", "0.00"],
                          ["gc cr block build time", "412", "0.11", "0.01"], ["Parallel operations downgraded 25 to 50 pct", "0", "0.00", "0.00"]],
                gcload=[["Global Cache blocks received:", "               121.40", "                11.67"],
                        ["Global Cache blocks served:", "               118.22", "                11.37"],
                        ["GCS/GES messages received:", "               644.10", "                61.93"],
                        ["GCS/GES messages sent:", "               661.83", "                63.64"],
                        ["Estd Interconnect traffic (KB)", "             2,133.05", ""]],
                gceff=[["Buffer access -  local cache %:", "  99.90"], ["Buffer access - remote cache %:", "   0.08"], ["Buffer access -         disk %:", "   0.02"]],
                cr=cr, cur="         1,102.7", pings=pings, clients=CLIENTS, devices=DEV19)


FG19 = [["enq: TX - row lock contention", "6,102", "", "3,210", "526.05ms", "0.16", "21.74"],
        ["gc current block busy", "171,450", "", "512", "2.99ms", "4.58", "3.47"],
        ["gc cr block 2-way", "112,904", "", "80", "708.56us", "3.01", "0.54"],
        ["gc cr multi block mixed", "9,871", "", "27", "2.74ms", "0.26", "0.18"],
        ["gc current block 2-way", "8,410", "", "3", "401.21us", "0.22", "0.02"],
        ["gc cr block congested", "31", "", "0", "2.61ms", "0.00", "0.00"],
        ["SQL*Net message from client", "14,201,554", "", "410,225", "28.89ms", "379.17", ""]]

# The XYDB reports of issue 34: gc blocks lost 96 and 21.
open("19c-public-layout-lost96.html", "w").write(report(xydb19("18353", "18354", "96", "           612.4", [["1", "329", "228", "0.00", "359", "208", "0.00"], ["2", "329", "299", "0.07", "359", "327", "0.06"]], FG19)))
open("19c-public-layout-lost21.html", "w").write(report(xydb19("9691", "9692", "21", "           376.5", [["1", "329", "238", "0.00", "359", "216", "0.00"], ["2", "329", "365", "0.07", "359", "361", "0.05"]], FG19)))

# DB id 2028335103: an instance that exchanged nothing: 0 blocks received,
# receive times printed 0, the other instance pinged 0 times; Foreground
# Wait Events with rows, none of them gc.
idle = xydb19("18192", "18193", "0", "               0.0", [["1", "330", "95", "0.00", "360", "84", "0.00"], ["2", "0", "0", "0.00", "0", "0", "0.00"]],
              [["log file sync", "4,186", "", "558", "133.36ms", "0.72", "1.68"], ["latch: shared pool", "1,070", "", "217", "202.62ms", "0.19", "0.65"],
               ["SQL*Net message from client", "201,554", "", "41,225", "204.54ms", "34.17", ""]])
idle.update(id="2028335103", host="racnode2", cur="               0.0",
            gcload=[["Global Cache blocks received:", "                 0.00", "                 0.00"],
                    ["Global Cache blocks served:", "                 0.00", "                 0.00"],
                    ["GCS/GES messages received:", "                 0.00", "                 0.00"],
                    ["GCS/GES messages sent:", "                 0.00", "                 0.00"],
                    ["Estd Interconnect traffic (KB)", "                 0.01", ""]],
            gceff=[["Buffer access -  local cache %:", " 100.00"], ["Buffer access - remote cache %:", "   0.00"], ["Buffer access -         disk %:", "   0.00"]])
open("19c-public-layout-idle.html", "w").write(report(idle))

# IDCDB, 12.2.0.1, a PDB report: RAC YES, no cluster sections, whole; the
# gc wait counts of issue 34 (congested 158,539 + 10,666 among 8.79 M block
# requests: 1.9 %), gc blocks lost 42,379 against 105 lost-block waits.
pdb = dict(title="WORKLOAD REPOSITORY PDB report (root snapshots)", db="IDCDB", id="4102709851", rel="12.2.0.1.0", inst="idcdb1", host="oda1",
           b="56288", e="56289", bt="09-Jan-25 10:00:09", et="09-Jan-25 11:00:07", dbtime="21,229.53",
           load=[["DB Time(s):", "             354.0", "              63.2", "      2.66", "      0.17"], ["DB CPU(s):", "               6.1", "               1.1", "      0.05", "      0.00"],
                 ["Transactions:", "               5.6", "", "", ""], ["Executes (SQL):", "             133.3", "              23.8", "", ""]],
           fg=[["gc buffer busy acquire", "6,990,874", "", "938,935", "134.31ms", "346.72", "73.71"],
               ["gc cr multi block mixed", "8,353,089", "", "255,293", "30.56ms", "414.28", "20.04"],
               ["gc current grant busy", "151,209", "", "7,387", "48.86ms", "7.50", "0.58"],
               ["gc cr multi block grant", "109,495", "", "5,129", "46.84ms", "5.43", "0.40"],
               ["gc cr block congested", "158,539", "", "4,079", "25.73ms", "7.86", "0.32"],
               ["gc cr failure", "556,432", "", "3,808", "6.84ms", "27.60", "0.30"],
               ["gc cr grant congested", "30,631", "", "685", "22.38ms", "1.52", "0.05"],
               ["gc current grant congested", "25,343", "", "494", "19.48ms", "1.26", "0.04"],
               ["gc cr block busy", "7,883", "", "438", "55.55ms", "0.39", "0.03"],
               ["gc current block congested", "10,666", "", "298", "27.98ms", "0.53", "0.02"],
               ["gc cr block 2-way", "141,141", "", "240", "1.70ms", "7.00", "0.02"],
               ["gc cr grant 2-way", "16,967", "", "48", "2.83ms", "0.84", "0.00"],
               ["gc current block busy", "1,544", "", "47", "30.58ms", "0.08", "0.00"],
               ["gc current grant 2-way", "7,340", "", "32", "4.42ms", "0.36", "0.00"],
               ["gc buffer busy release", "1,709", "", "23", "13.18ms", "0.08", "0.00"],
               ["gc cr block lost", "102", "", "20", "194.52ms", "0.01", "0.00"],
               ["gc current block 2-way", "2,832", "", "9", "3.22ms", "0.14", "0.00"],
               ["gc current block lost", "3", "", "1", "449.74ms", "0.00", "0.00"],
               ["gc current multi block request", "4", "", "0", "32.80ms", "0.00", "0.00"]],
           activity=[["free buffer requested", "322,651,247", "89,668.91", "16,002.14"], ["gc blocks lost", "42,379", "11.78", "2.10"],
                     ["gc cr blocks received", "248,881,593", "69,167.38", "12,343.48"]])
open("12.2-public-layout-pdb-lost42379.html", "w").write(report(pdb, cluster=False))

# XYDB before its upgrade: DB id 1882826147, 11.2.0.4 (milliseconds,
# "Other Instance Activity Stats", Dynamic Remastering Stats without data).
old = xydb19("24703", "24704", "0", "             0.4", [["1", "174", "0.17", "0.04", "174", "0.16", "0.04"], ["2", "174", "0.20", "0.05", "174", "0.29", "0.07"]], FG19)
old.update(id="1882826147", rel="11.2.0.4.0", cur="             0.5",
           load=[["DB Time(s):", "               3.8", "               0.4", "      0.00", "      0.00"], ["DB CPU(s):", "               2.0", "               0.2", "      0.00", "      0.00"],
                 ["Transactions:", "               9.6", "", "", ""], ["Executes:", "           2,310.4", "             240.7", "", ""]],
           devices=[["eth1", "192.168.10.1", "", "OS dependent software", "0.91", "0", "0", "0", "0", "0.88", "0", "0", "0", "0"]])
open("11.2.0.4-public-layout-xydb.html", "w").write(report(old))
