// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package standin

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/template"
	"time"
)

// TraceEnv names an environment variable: when it is set to a non-empty value, the stand-in append every call to calls.log in
// the state directory.
const TraceEnv = "MCR_KIND_STANDIN_TRACE"

// Version is what `docker -v` prints. kind detects docker by the "Docker version" prefix.
const Version = "Docker version 28.0.0, build mcr-standin"

// hangLimit bounds ExecHangs, so that a forgotten release file never leaves a process behind
// for long.
const hangLimit = time.Minute

// Run runs one docker command line (args without the program name) against the state
// directory dir, and returns the exit code.
func Run(dir string, args []string, stdout, stderr io.Writer) int {
	c := &cli{state: State{Dir: dir}, stdout: stdout, stderr: stderr, args: args}
	if os.Getenv(TraceEnv) != "" {
		c.appendLine("calls.log", strings.Join(args, " "))
	}
	if dir == "" {
		fmt.Fprintf(stderr, "docker stand-in: $%s is not set\n", StateDirEnv)
		return 1
	}
	if len(args) == 0 {
		return c.unsupported("no command")
	}
	var err error
	switch args[0] {
	case "-v", "--version":
		fmt.Fprintln(stdout, Version)
		return 0
	case "info":
		err = c.info(args[1:])
	case "ps":
		err = c.ps(args[1:])
	case "inspect":
		err = c.inspect(args[1:])
	case "port":
		err = c.port(args[1:])
	case "exec":
		err = c.exec(args[1:])
	default:
		return c.unsupported("command " + args[0])
	}
	var u errUnsupported
	if errors.As(err, &u) {
		return c.unsupported(string(u))
	}
	if err != nil {
		if !errors.Is(err, errExit1) {
			fmt.Fprintln(stderr, err)
		}
		return 1
	}
	return 0
}

type errUnsupported string

func (e errUnsupported) Error() string { return "unsupported: " + string(e) }

type cli struct {
	state          State
	stdout, stderr io.Writer
	args           []string
}

func (c *cli) unsupported(what string) int {
	c.appendLine("unsupported.log", strings.Join(c.args, " "))
	fmt.Fprintf(c.stderr, "docker stand-in: %s is not supported: docker %s\n", what, strings.Join(c.args, " "))
	return 125
}

func (c *cli) appendLine(file, line string) {
	f, err := os.OpenFile(filepath.Join(c.state.Dir, file), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return
	}
	defer f.Close()
	_, _ = f.WriteString(line + "\n")
}

// flags is a minimal parser for the docker flags the stand-in knows.
type flags struct {
	bools  map[string]bool     // flag names that take no value
	values map[string][]string // flag names that take a value, and the values seen
	rest   []string
}

func parseFlags(args []string, boolFlags, valueFlags []string, stopAtArg bool) (*flags, error) {
	f := &flags{bools: map[string]bool{}, values: map[string][]string{}}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") || a == "-" {
			if stopAtArg {
				f.rest = append(f.rest, args[i:]...)
				return f, nil
			}
			f.rest = append(f.rest, a)
			continue
		}
		name, value, hasValue := strings.Cut(a, "=")
		switch {
		case slices.Contains(boolFlags, name):
			f.bools[name] = true
		case slices.Contains(valueFlags, name):
			if !hasValue {
				if i+1 >= len(args) {
					return nil, errUnsupported("flag " + name + " without a value")
				}
				i++
				value = args[i]
			}
			f.values[name] = append(f.values[name], value)
		default:
			return nil, errUnsupported("flag " + name)
		}
	}
	return f, nil
}

func (f *flags) value(names ...string) (string, bool) {
	for _, n := range names {
		if v := f.values[n]; len(v) > 0 {
			return v[len(v)-1], true
		}
	}
	return "", false
}

var templateFuncs = template.FuncMap{
	"json": func(v any) (string, error) {
		b, err := json.Marshal(v)
		return string(b), err
	},
	"join":  strings.Join,
	"lower": strings.ToLower,
	"upper": strings.ToUpper,
	"split": strings.Split,
}

// render evaluates a docker --format template for each value, one line each.
func (c *cli) render(format string, values ...any) error {
	tmpl, err := template.New("format").Funcs(templateFuncs).Parse(format)
	if err != nil {
		return fmt.Errorf("template parsing error: %w", err)
	}
	for _, v := range values {
		var b strings.Builder
		if err := tmpl.Execute(&b, v); err != nil {
			return fmt.Errorf("template: %w", err)
		}
		fmt.Fprintln(c.stdout, b.String())
	}
	return nil
}

// dockerInfo has the fields of `docker info` that kind reads.
type dockerInfo struct {
	ServerVersion   string
	OperatingSystem string
	Driver          string
	DriverStatus    [][2]string
	CgroupDriver    string
	CgroupVersion   string
	MemoryLimit     bool
	PidsLimit       bool
	CPUShares       bool
	SecurityOptions []string
}

func (c *cli) info(args []string) error {
	f, err := parseFlags(args, nil, []string{"--format", "-f"}, false)
	if err != nil {
		return err
	}
	if len(f.rest) > 0 {
		return errUnsupported("arguments to info")
	}
	info := dockerInfo{
		ServerVersion:   "28.0.0",
		OperatingSystem: "mcr kind stand-in",
		Driver:          "overlay2",
		DriverStatus:    [][2]string{{"Backing Filesystem", "extfs"}},
		CgroupDriver:    "systemd",
		CgroupVersion:   "2",
		MemoryLimit:     true,
		PidsLimit:       true,
		CPUShares:       true,
		SecurityOptions: []string{"name=seccomp,profile=builtin", "name=cgroupns"},
	}
	format, ok := f.value("--format", "-f")
	if !ok {
		fmt.Fprintf(c.stdout, "Server Version: %s\nStorage Driver: %s\nCgroup Driver: %s\nCgroup Version: %s\n",
			info.ServerVersion, info.Driver, info.CgroupDriver, info.CgroupVersion)
		return nil
	}
	// A template in literal quotes (kind's usernsRemap passes one) prints them back, as docker does.
	return c.render(format, info)
}

// container is one node container with its cluster.
type container struct {
	cluster string
	node    Node
}

func (ct container) id() string {
	if ct.node.ID != "" {
		return ct.node.ID
	}
	// A stable, docker-looking ID.
	return fmt.Sprintf("%x", []byte(ct.node.Name+"................................"))[:64]
}

func (ct container) labels() map[string]string {
	l := map[string]string{ClusterLabel: ct.cluster, RoleLabel: ct.node.Role}
	for k, v := range ct.node.Labels {
		l[k] = v
	}
	return l
}

func (c *cli) containers() ([]container, error) {
	clusters, err := c.state.Clusters()
	if err != nil {
		return nil, dockerSays("Cannot connect to the Docker daemon: reading the stand-in state: %v", err)
	}
	var out []container
	for name, cl := range clusters {
		for _, n := range cl.Nodes {
			out = append(out, container{cluster: name, node: n})
		}
	}
	// docker lists newest first; any fixed order will do for kind, which sorts.
	slices.SortFunc(out, func(a, b container) int { return strings.Compare(a.node.Name, b.node.Name) })
	return out, nil
}

func (c *cli) find(nameOrID string) (container, bool, error) {
	all, err := c.containers()
	if err != nil {
		return container{}, false, err
	}
	for _, ct := range all {
		if ct.node.Name == nameOrID || ct.id() == nameOrID || strings.HasPrefix(ct.id(), nameOrID) && len(nameOrID) >= 12 {
			return ct, true, nil
		}
	}
	return container{}, false, nil
}

// psRow is a row of `docker ps`, with the fields and the Label method of docker's formatter.
type psRow struct {
	ID     string
	Image  string
	Names  string
	Status string
	State  string
	Labels string
	labels map[string]string
}

// Label returns the value of a label, as in docker's `{{.Label "key"}}`.
func (r psRow) Label(key string) string { return r.labels[key] }

func (c *cli) ps(args []string) error {
	f, err := parseFlags(args, []string{"-a", "--all", "-q", "--quiet", "--no-trunc"}, []string{"--filter", "-f", "--format"}, false)
	if err != nil {
		return err
	}
	if len(f.rest) > 0 {
		return errUnsupported("arguments to ps")
	}
	type labelFilter struct{ key, value string }
	var filters []labelFilter
	for _, spec := range append(f.values["--filter"], f.values["-f"]...) {
		kind, rest, _ := strings.Cut(spec, "=")
		if kind != "label" {
			return errUnsupported("filter " + kind)
		}
		key, value, hasValue := strings.Cut(rest, "=")
		lf := labelFilter{key: key}
		if hasValue {
			lf.value = value
		} else {
			lf.value = "\x00any"
		}
		filters = append(filters, lf)
	}
	all, err := c.containers()
	if err != nil {
		return err
	}
	var rows []any
	for _, ct := range all {
		if ct.node.Stopped && !f.bools["-a"] && !f.bools["--all"] {
			continue
		}
		labels := ct.labels()
		match := true
		for _, lf := range filters {
			v, ok := labels[lf.key]
			if !ok || (lf.value != "\x00any" && v != lf.value) {
				match = false
			}
		}
		if !match {
			continue
		}
		row := psRow{ID: ct.id()[:12], Image: "kindest/node:v1.36.3", Names: ct.node.Name, labels: labels}
		if f.bools["--no-trunc"] {
			row.ID = ct.id()
		}
		if ct.node.Stopped {
			row.State, row.Status = "exited", "Exited (0) 1 minute ago"
		} else {
			row.State, row.Status = "running", "Up 1 minute"
		}
		var pairs []string
		for _, k := range slices.Sorted(mapsKeys(labels)) {
			pairs = append(pairs, k+"="+labels[k])
		}
		row.Labels = strings.Join(pairs, ",")
		rows = append(rows, row)
	}
	if f.bools["-q"] || f.bools["--quiet"] {
		for _, r := range rows {
			fmt.Fprintln(c.stdout, r.(psRow).ID)
		}
		return nil
	}
	format, ok := f.value("--format")
	if !ok {
		format = "{{.ID}}\t{{.Image}}\t{{.Status}}\t{{.Names}}"
	}
	return c.render(format, rows...)
}

func mapsKeys(m map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// inspectJSON has the fields of `docker inspect` of a container that kind reads.
type inspectJSON struct {
	ID     string `json:"Id"`
	Name   string
	State  inspectState
	Config struct {
		Hostname string
		Image    string
		Labels   map[string]string
	}
	NetworkSettings struct {
		Ports    map[string][]PortBinding
		Networks map[string]*inspectNetwork
	}
}

type inspectState struct {
	Status  string
	Running bool
}

type inspectNetwork struct {
	IPAddress         string
	GlobalIPv6Address string
}

func (ct container) inspect() inspectJSON {
	var j inspectJSON
	j.ID = ct.id()
	j.Name = "/" + ct.node.Name
	if ct.node.Stopped {
		j.State = inspectState{Status: "exited"}
	} else {
		j.State = inspectState{Status: "running", Running: true}
	}
	j.Config.Hostname = ct.node.Name
	j.Config.Image = "kindest/node:v1.36.3"
	j.Config.Labels = ct.labels()
	j.NetworkSettings.Ports = map[string][]PortBinding{}
	for port, b := range ct.node.Ports {
		j.NetworkSettings.Ports[port] = b
	}
	j.NetworkSettings.Networks = map[string]*inspectNetwork{"kind": {IPAddress: "172.18.0.2", GlobalIPv6Address: "fc00:f853:ccd:e793::2"}}
	return j
}

func (c *cli) inspect(args []string) error {
	f, err := parseFlags(args, []string{"--size", "-s"}, []string{"--format", "-f", "--type"}, false)
	if err != nil {
		return err
	}
	if t, ok := f.value("--type"); ok && t != "container" {
		return errUnsupported("inspect --type " + t)
	}
	if len(f.rest) == 0 {
		return dockerSays(`"docker inspect" requires at least 1 argument.`)
	}
	found := []any{}
	var missing []string
	for _, name := range f.rest {
		ct, ok, err := c.find(name)
		if err != nil {
			return err
		}
		if !ok {
			missing = append(missing, name)
			continue
		}
		found = append(found, ct.inspect())
	}
	format, ok := f.value("--format", "-f")
	if ok {
		if err := c.render(format, found...); err != nil {
			return err
		}
	} else {
		data, err := json.MarshalIndent(found, "", "    ")
		if err != nil {
			return err
		}
		fmt.Fprintln(c.stdout, string(data))
	}
	if len(missing) > 0 {
		return dockerSays("Error: No such object: %s", strings.Join(missing, ", "))
	}
	return nil
}

func (c *cli) port(args []string) error {
	if len(args) < 1 || len(args) > 2 {
		return errUnsupported("port with these arguments")
	}
	ct, ok, err := c.find(args[0])
	if err != nil {
		return err
	}
	if !ok {
		return dockerSays("Error response from daemon: No such container: %s", args[0])
	}
	if len(args) == 2 {
		port := args[1]
		if !strings.Contains(port, "/") {
			port += "/tcp"
		}
		b := ct.node.Ports[port]
		if len(b) == 0 {
			return dockerSays("Error: No public port '%s' published for %s", port, ct.node.Name)
		}
		for _, x := range b {
			fmt.Fprintf(c.stdout, "%s:%s\n", x.HostIp, x.HostPort)
		}
		return nil
	}
	for _, p := range slices.Sorted(func(yield func(string) bool) {
		for k := range ct.node.Ports {
			if !yield(k) {
				return
			}
		}
	}) {
		for _, x := range ct.node.Ports[p] {
			fmt.Fprintf(c.stdout, "%s -> %s:%s\n", p, x.HostIp, x.HostPort)
		}
	}
	return nil
}

func (c *cli) exec(args []string) error {
	f, err := parseFlags(args,
		[]string{"--privileged", "-i", "--interactive", "-t", "--tty", "-it", "-ti", "-d", "--detach"},
		[]string{"-e", "--env", "-u", "--user", "-w", "--workdir"}, true)
	if err != nil {
		return err
	}
	if len(f.rest) < 2 {
		return dockerSays(`"docker exec" requires at least 2 arguments.`)
	}
	name, command := f.rest[0], f.rest[1:]
	ct, ok, err := c.find(name)
	if err != nil {
		return err
	}
	if !ok {
		return dockerSays("Error response from daemon: No such container: %s", name)
	}
	if ct.node.Stopped {
		return dockerSays("Error response from daemon: container %s is not running", ct.id())
	}
	if ct.node.ExecHangs != "" {
		release := filepath.Join(c.state.Dir, ct.node.ExecHangs)
		for deadline := time.Now().Add(hangLimit); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if _, err := os.Stat(release); errors.Is(err, os.ErrNotExist) {
				break
			}
		}
	}
	if ct.node.ExecFails != "" {
		return errors.New(ct.node.ExecFails)
	}
	if command[0] != "cat" {
		return errUnsupported("exec of " + command[0])
	}
	var failed bool
	for _, path := range command[1:] {
		content, ok := ct.node.Files[path]
		if !ok {
			fmt.Fprintf(c.stderr, "cat: %s: No such file or directory\n", path)
			failed = true
			continue
		}
		fmt.Fprint(c.stdout, content)
	}
	if failed {
		return errExit1
	}
	return nil
}

// dockerSays is a failure with docker's own message, printed as docker prints it.
func dockerSays(format string, args ...any) error {
	return dockerMessage(fmt.Sprintf(format, args...))
}

type dockerMessage string

func (m dockerMessage) Error() string { return string(m) }

// errExit1 fails with exit code 1; the message was already written.
var errExit1 = errors.New("exit status 1")
