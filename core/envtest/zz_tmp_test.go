package envtest

import (
	"testing"
	"time"
)

func TestTmpFlags(t *testing.T) {
	for name, flags := range map[string]map[string]string{
		"default":        nil,
		"no-watch-cache": {"watch-cache": "false"},
		"apf-on":         {"enable-priority-and-fairness": "true"},
	} {
		f, err := Start(t.Context(), Options{TempDir: t.TempDir(), APIServerFlags: flags})
		if err != nil {
			t.Fatal(err)
		}
		var total time.Duration
		var rssT int64
		for i := 0; i < 3; i++ {
			s := time.Now()
			m, err := f.AddMember(t.Context(), "m")
			if err != nil {
				t.Fatal(err)
			}
			total += time.Since(s)
			rss, _, _ := memoryStatus(m.proc.Load().pid())
			rssT += rss
			f.RemoveMember("m")
		}
		t.Logf("%s: start %.2fs rss %d MiB", name, total.Seconds()/3, rssT/3>>20)
		f.Stop()
	}
}
