package inventory

import (
	"path"
	"sort"
	"strconv"
	"strings"
)

// maxTunedIncludes bounds how deep check follows tuned's include= lines
// (a loop in a hostile tree ends there).
const maxTunedIncludes = 8

// cpuDirs returns the cpuN directories under /sys/devices/system/cpu,
// sorted by N.
func cpuDirs(src *Source) ([]int, error) {
	ents, err := src.ReadDir(cpuDir)
	if err != nil {
		return nil, err
	}
	var cpus []int
	for _, e := range ents {
		n, err := strconv.Atoi(strings.TrimPrefix(e.Name(), "cpu"))
		if err == nil && strings.HasPrefix(e.Name(), "cpu") && n >= 0 {
			cpus = append(cpus, n)
		}
	}
	sort.Ints(cpus)
	return cpus, nil
}

func cpuPath(n int, rest string) string { return cpuDir + "/cpu" + strconv.Itoa(n) + "/" + rest }

func readInt(src *Source, p string) *int64 {
	s, err := src.ReadString(p)
	if err != nil {
		return nil
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return nil
	}
	return &v
}

// readCPUIdle reads the cpuidle driver and governor and every CPU's idle
// states; nil when the node has no cpuidle directory.
func readCPUIdle(src *Source, note func(string, error)) *CPUIdle {
	drv, derr := src.ReadString(cpuidleDir + "/current_driver")
	note(cpuidleDir+"/current_driver", derr)
	idle := &CPUIdle{Driver: drv}
	for _, f := range []string{"current_governor", "current_governor_ro"} {
		if g, err := src.ReadString(cpuidleDir + "/" + f); err == nil {
			idle.Governor, idle.GovernorFile = g, cpuidleDir+"/"+f
			break
		}
	}
	cpus, err := cpuDirs(src)
	note(cpuDir, err)
	byIndex := map[int]*IdleState{}
	for _, c := range cpus {
		ents, err := src.ReadDir(cpuPath(c, "cpuidle"))
		if err != nil {
			note(cpuPath(c, "cpuidle"), err)
			continue
		}
		idle.CPUs++
		for _, e := range ents {
			k, err := strconv.Atoi(strings.TrimPrefix(e.Name(), "state"))
			if err != nil || !strings.HasPrefix(e.Name(), "state") {
				continue
			}
			dir := cpuPath(c, "cpuidle/"+e.Name())
			st := byIndex[k]
			if st == nil {
				st = &IdleState{Index: k, Dir: dir}
				st.Name, _ = src.ReadString(dir + "/name")
				st.LatencyUs = readInt(src, dir+"/latency")
				st.ResidencyUs = readInt(src, dir+"/residency")
				byIndex[k] = st
			}
			if d := readInt(src, dir+"/disable"); d != nil {
				if *d == 0 {
					st.Enabled++
				} else {
					st.Disabled++
				}
			}
		}
	}
	if derr != nil && idle.CPUs == 0 && idle.Governor == "" {
		return nil
	}
	idle.States = []IdleState{}
	for _, st := range byIndex {
		idle.States = append(idle.States, *st)
	}
	sort.Slice(idle.States, func(i, j int) bool { return idle.States[i].Index < idle.States[j].Index })
	return idle
}

// readHaltpoll reads the haltpoll governor's parameters; nil when the
// kernel has no haltpoll governor.
func readHaltpoll(src *Source, note func(string, error)) *Haltpoll {
	ents, err := src.ReadDir(HaltpollDir)
	if err != nil {
		note(HaltpollDir, err)
		return nil
	}
	h := &Haltpoll{Params: map[string]string{}, Dir: HaltpollDir}
	for _, e := range ents {
		v, err := src.ReadString(HaltpollDir + "/" + e.Name())
		if err != nil {
			note(HaltpollDir+"/"+e.Name(), err)
			continue
		}
		h.Params[e.Name()] = v
	}
	if v, err := strconv.ParseInt(h.Params["guest_halt_poll_ns"], 10, 64); err == nil {
		h.PollNs = &v
	}
	return h
}

// tunedProfileDirs are where tuned looks for a profile, the operator's
// first (tuned 2.23 moved them under profiles/).
var tunedProfileDirs = []string{"/etc/tuned/profiles", "/etc/tuned", "/usr/lib/tuned/profiles", "/usr/lib/tuned"}

// readTuned reads tuned's active profile and, through its profile files
// and their includes, the [cpu] settings; nil without an active profile.
func readTuned(src *Source, note func(string, error)) *Tuned {
	p, err := src.ReadString(TunedActive)
	if err != nil || p == "" {
		note(TunedActive, err)
		return nil
	}
	t := &Tuned{Profile: p, File: TunedActive}
	seen := map[string]bool{}
	var visit func(name string, depth int)
	visit = func(name string, depth int) {
		if depth > maxTunedIncludes || seen[name] || strings.ContainsAny(name, "/\x00") || name == ".." || name == "." {
			return
		}
		seen[name] = true
		for _, d := range tunedProfileDirs {
			f := d + "/" + name + "/tuned.conf"
			b, err := src.ReadFile(f)
			if err != nil {
				continue
			}
			c := ParseTunedConf(strings.NewReader(string(b)))
			for _, inc := range c.Include {
				visit(inc, depth+1) // included first: this profile overrides them
			}
			t.ProfileFiles = append(t.ProfileFiles, f)
			if c.HasLatency {
				t.ForceLatency, t.ForceLatencyFile = c.ForceLatency, f
			}
			if c.Governor != "" {
				t.Governor = c.Governor
			}
			return
		}
	}
	for _, name := range strings.Fields(p) {
		visit(name, 0)
	}
	return t
}

// readCPUFreq reads each CPU's scaling governor; nil when no CPU has one
// (a guest without cpufreq, a tree without it).
func readCPUFreq(src *Source, note func(string, error)) *CPUFreq {
	cpus, err := cpuDirs(src)
	if err != nil {
		return nil
	}
	f := &CPUFreq{Governors: map[string]int{}}
	for _, c := range cpus {
		p := cpuPath(c, "cpufreq/scaling_governor")
		g, err := src.ReadString(p)
		if err != nil {
			note(p, err)
			continue
		}
		if f.File == "" {
			f.File = p
			f.Driver, _ = src.ReadString(cpuPath(c, "cpufreq/scaling_driver"))
		}
		f.Governors[g]++
	}
	if f.File == "" {
		return nil
	}
	return f
}

// realDevice returns the sysfs directory of an interface's device, from
// the /sys/class/net/IF link (read by readInterface): the directory above
// its net/IF. Empty when the link is not known.
func realDevice(ifc Interface) string {
	if ifc.LinkTarget == "" {
		return ""
	}
	dir := path.Join("/sys/class/net", ifc.LinkTarget) // .../DEVICE/net/IF
	if path.Base(path.Dir(dir)) != "net" {
		return ""
	}
	return path.Dir(path.Dir(dir))
}
