package inputtest

// Bad input: hard errors are one `fleetwatch: ` line naming the file or flag
// and exit 2; odd files in the tree are skipped or read with a warning.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
)

func TestBadInputIsOneLineExit2(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		// setup returns the directory to run in and the arguments; names are
		// what stderr must mention.
		setup func(t *testing.T) (dir string, args []string, names []string)
		// stays lists rels that must still exist afterwards.
		stays []string
	}{
		{name: "NoPlansDir", setup: func(t *testing.T) (string, []string, []string) {
			empty := t.TempDir()
			return t.TempDir(), []string{"work-once", "--once", "--root", empty}, []string{".plans", empty}
		}},
		{name: "NoPlansDirList", setup: func(t *testing.T) (string, []string, []string) {
			empty := t.TempDir()
			return t.TempDir(), []string{"work-once", "--list", "--json", "--root", empty}, []string{".plans", empty}
		}},
		{name: "NoPlansDirCheck", setup: func(t *testing.T) (string, []string, []string) {
			empty := t.TempDir()
			return t.TempDir(), []string{"check", "--root", empty}, []string{".plans", empty}
		}},
		{name: "NoPlansDirVerb", setup: func(t *testing.T) (string, []string, []string) {
			empty := t.TempDir()
			return t.TempDir(), []string{"release", "in-progress/a.md", "--root", empty}, []string{".plans", empty}
		}},
		{name: "PathOutsideTree", setup: func(t *testing.T) (string, []string, []string) {
			dir := fwtest.NewTree(t, fwtest.Plan{Rel: "features/a.md", Fields: "Preferred models: mid"})
			outside := filepath.Join(dir, "notes.md")
			writeAbs(t, outside, "# Plan: outside\n\n- **Preferred models:** mid\n")
			return dir, []string{"work-once", "--path", outside, "--agent-id", "w"}, []string{"--path", "notes.md"}
		}, stays: []string{"features/a.md"}},
		{name: "PathOutsideTreePark", setup: func(t *testing.T) (string, []string, []string) {
			dir := fwtest.NewTree(t)
			outside := filepath.Join(t.TempDir(), "x.md")
			writeAbs(t, outside, "# x\n")
			return dir, []string{"work-once", "--path", outside, "--park", "blocked"}, []string{"--path", "x.md"}
		}},
		{name: "PathThroughSymlinkLeavingTree", setup: func(t *testing.T) (string, []string, []string) {
			dir := fwtest.NewTree(t)
			outside := filepath.Join(t.TempDir(), "secret.md")
			writeAbs(t, outside, "# Plan: secret\n\n- **Preferred models:** mid\n")
			link := filepath.Join(dir, ".plans", "features", "secret.md")
			if err := os.Symlink(outside, link); err != nil {
				t.Fatal(err)
			}
			return dir, []string{"work-once", "--path", link, "--agent-id", "w"}, []string{"--path", "secret.md"}
		}, stays: []string{"features/secret.md"}},
		{name: "PathThroughSymlinkedDirLeavingTree", setup: func(t *testing.T) (string, []string, []string) {
			dir := fwtest.NewTree(t)
			outDir := t.TempDir()
			writeAbs(t, filepath.Join(outDir, "s.md"), "# Plan: s\n\n- **Preferred models:** mid\n")
			if err := os.Symlink(outDir, filepath.Join(dir, ".plans", "features", "sub")); err != nil {
				t.Fatal(err)
			}
			return dir, []string{"work-once", "--path", ".plans/features/sub/s.md", "--agent-id", "w"}, []string{"--path", "s.md"}
		}},
		{name: "PathMissing", setup: func(t *testing.T) (string, []string, []string) {
			return fwtest.NewTree(t), []string{"work-once", "--path", "features/nope.md"}, []string{"--path", "nope.md"}
		}},
		{name: "SlugDotDot", setup: func(t *testing.T) (string, []string, []string) {
			dir := fwtest.NewTree(t)
			writeAbs(t, filepath.Join(dir, ".plans", "x.md"), "# x\n")
			return dir, []string{"work-once", "--slug", "../x", "--agent-id", "w"}, []string{"--slug", "../x"}
		}},
		{name: "SlugDotDotRecover", setup: func(t *testing.T) (string, []string, []string) {
			return fwtest.NewTree(t), []string{"work-once", "--recover", "--slug", "../../etc/passwd"}, []string{"--slug"}
		}},
		{name: "UnknownTier", setup: func(t *testing.T) (string, []string, []string) {
			return fwtest.NewTree(t, fwtest.Plan{Rel: "features/a.md"}), []string{"work-once", "--once", "--tier", "gigantic"}, []string{"--tier", "gigantic"}
		}, stays: []string{"features/a.md"}},
		{name: "UnknownEndpoint", setup: func(t *testing.T) (string, []string, []string) {
			dir := fwtest.NewTree(t, fwtest.Plan{Rel: "features/a.md"})
			reg := filepath.Join(dir, "reg.yaml")
			writeAbs(t, reg, "endpoints:\n  - name: laptop-swarm\n    tier: swarm\n    model: Qwen/Qwen3-8B\n")
			return dir, []string{"work-once", "--once", "--endpoint", "h100", "--registry", reg}, []string{"h100", "reg.yaml"}
		}, stays: []string{"features/a.md"}},
		{name: "MalformedRegistrySyntax", setup: func(t *testing.T) (string, []string, []string) {
			dir := fwtest.NewTree(t, fwtest.Plan{Rel: "features/a.md"})
			reg := filepath.Join(dir, "endpoints.yaml")
			writeAbs(t, reg, "endpoints:\n  - name: a\n    tier: mid\n    model: a: b\n")
			return dir, []string{"work-once", "--once", "--endpoint", "a"}, []string{"endpoints.yaml:4:"}
		}, stays: []string{"features/a.md"}},
		{name: "MalformedRegistryEntry", setup: func(t *testing.T) (string, []string, []string) {
			dir := fwtest.NewTree(t, fwtest.Plan{Rel: "features/a.md"})
			reg := filepath.Join(dir, "fleet.yaml")
			writeAbs(t, reg, "endpoints:\n  - name: a\n    tier: mid\n  - tier: small\n    model: m\n")
			return dir, []string{"work-once", "--list", "--endpoint", "a", "--registry", reg}, []string{"fleet.yaml:4:"}
		}},
		{name: "InProgressIsAFile", setup: func(t *testing.T) (string, []string, []string) {
			dir := fwtest.NewTree(t, fwtest.Plan{Rel: "features/a.md", Fields: "Preferred models: mid"})
			ip := filepath.Join(dir, ".plans", "in-progress")
			if err := os.RemoveAll(ip); err != nil {
				t.Fatal(err)
			}
			writeAbs(t, ip, "not a directory\n")
			return dir, []string{"work-once", "--once", "--agent-id", "w"}, []string{"in-progress"}
		}, stays: []string{"features/a.md"}},
		{name: "InProgressIsAFileNamedSlug", setup: func(t *testing.T) (string, []string, []string) {
			dir := fwtest.NewTree(t, fwtest.Plan{Rel: "features/a.md", Fields: "Preferred models: mid"})
			ip := filepath.Join(dir, ".plans", "in-progress")
			if err := os.RemoveAll(ip); err != nil {
				t.Fatal(err)
			}
			writeAbs(t, ip, "")
			return dir, []string{"work-once", "--slug", "a", "--agent-id", "w"}, []string{"in-progress", "features/a.md"}
		}, stays: []string{"features/a.md"}},
		{name: "ParkTargetIsAFile", setup: func(t *testing.T) (string, []string, []string) {
			dir := fwtest.NewTree(t, fwtest.Plan{Rel: "features/a.md", Fields: "Preferred models: mid"})
			bl := filepath.Join(dir, ".plans", "blocked")
			if err := os.RemoveAll(bl); err != nil {
				t.Fatal(err)
			}
			writeAbs(t, bl, "")
			return dir, []string{"park", "a", "--to", "blocked"}, []string{"blocked"}
		}, stays: []string{"features/a.md"}},
		{name: "MaxPlansNegative", setup: func(t *testing.T) (string, []string, []string) {
			return fwtest.NewTree(t, fwtest.Plan{Rel: "features/a.md"}), []string{"work-once", "--max-plans", "-1"}, []string{"--max-plans"}
		}, stays: []string{"features/a.md"}},
		{name: "MaxPlansNotANumber", setup: func(t *testing.T) (string, []string, []string) {
			return fwtest.NewTree(t), []string{"work-once", "--max-plans", "three"}, []string{"max-plans"}
		}},
		{name: "UnknownFlag", setup: func(t *testing.T) (string, []string, []string) {
			return fwtest.NewTree(t, fwtest.Plan{Rel: "features/a.md"}), []string{"work-once", "--bogus-flag"}, []string{"bogus-flag"}
		}, stays: []string{"features/a.md"}},
		{name: "UnknownFlagVerb", setup: func(t *testing.T) (string, []string, []string) {
			return fwtest.NewTree(t), []string{"park", "a", "--too", "blocked"}, []string{"too"}
		}},
		{name: "LeaseTTLZero", setup: func(t *testing.T) (string, []string, []string) {
			return fwtest.NewTree(t), []string{"work-once", "--lease-ttl", "0"}, []string{"--lease-ttl"}
		}},
		{name: "LeaseTTLNaN", setup: func(t *testing.T) (string, []string, []string) {
			return fwtest.NewTree(t, fwtest.Plan{Rel: "features/a.md"}), []string{"work-once", "--once", "--lease-ttl", "NaN"}, []string{"--lease-ttl"}
		}, stays: []string{"features/a.md"}},
		{name: "ParkBadLane", setup: func(t *testing.T) (string, []string, []string) {
			return fwtest.NewTree(t, fwtest.Plan{Rel: "features/a.md"}), []string{"work-once", "--slug", "a", "--park", "completed"}, []string{"--park"}
		}, stays: []string{"features/a.md"}},
		{name: "TargetLaneBad", setup: func(t *testing.T) (string, []string, []string) {
			return fwtest.NewTree(t), []string{"work-once", "--slug", "a", "--return-ready", "--target-lane", "drafts"}, []string{"--target-lane"}
		}},
		{name: "PromoteToBadLane", setup: func(t *testing.T) (string, []string, []string) {
			return fwtest.NewTree(t, fwtest.Plan{Rel: "drafts/d.md", Fields: "Preferred models: mid"}), []string{"promote", "d", "--to", "completed"}, []string{"--to"}
		}, stays: []string{"drafts/d.md"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir, args, names := c.setup(t)
			r := fwtest.Run(t, dir, args...)
			fwtest.OneLineError(t, r, names...)
			for _, rel := range c.stays {
				if !fwtest.Exists(dir, rel) {
					t.Errorf("%s moved", rel)
				}
			}
			if len(c.stays) > 0 {
				// A failed claim leaves no ready-path lease behind.
				for _, rel := range c.stays {
					if fwtest.LeaseOf(t, dir, rel) != nil {
						t.Errorf("%s: lease left behind", rel)
					}
				}
			}
		})
	}
}

func writeAbs(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Odd files in the tree are read or skipped with a warning, never fatal.
func TestOddPlanFilesAreWarningsNotErrors(t *testing.T) {
	t.Parallel()
	type check func(t *testing.T, m map[string]any)
	cases := []struct {
		name  string
		rel   string
		setup func(t *testing.T, dir, path string)
		warns bool
		// read is checked when the plan is still listed; nil means it must be skipped.
		read check
	}{
		{name: "HugePlan", rel: "features/huge.md", warns: true,
			setup: func(t *testing.T, dir, path string) {
				var b strings.Builder
				b.WriteString("# Plan: huge\n\n- **Priority:** P1\n- **Value:** high\n- **Preferred models:** mid\n\n## Notes\n")
				for b.Len() < 80<<10 {
					b.WriteString("A long line of notes that keeps going so the file passes 64 KiB.\n")
				}
				b.WriteString("- **Assignee:** bob\n") // past 64 KiB: never read
				writeAbs(t, path, b.String())
				if err := os.Truncate(path, 100<<20); err != nil {
					t.Fatal(err)
				}
			},
			read: func(t *testing.T, p map[string]any) {
				if p["priority"] != "P1" || p["value"] != "high" || p["assignee"] != "" || p["fit"] != "good" || p["title"] != "Plan: huge" {
					t.Errorf("huge plan header: %v", p)
				}
			}},
		{name: "BinaryWithNUL", rel: "features/blob.md", warns: true,
			setup: func(t *testing.T, dir, path string) {
				writeAbs(t, path, "# Plan: blob\n\x00\x01\x02\xff\xfe- **Priority:** P1\n")
			}},
		{name: "DirectoryNamedMd", rel: "features/x.md", warns: true,
			setup: func(t *testing.T, dir, path string) {
				if err := os.MkdirAll(filepath.Join(path, "inner"), 0o755); err != nil {
					t.Fatal(err)
				}
			}},
		{name: "SymlinkLeavingTree", rel: "features/away.md", warns: true,
			setup: func(t *testing.T, dir, path string) {
				outside := filepath.Join(t.TempDir(), "away.md")
				writeAbs(t, outside, "# Plan: away\n\n- **Preferred models:** mid\n")
				if err := os.Symlink(outside, path); err != nil {
					t.Fatal(err)
				}
			}},
		{name: "BrokenSymlink", rel: "features/gone.md", warns: true,
			setup: func(t *testing.T, dir, path string) {
				if err := os.Symlink(filepath.Join(dir, "nowhere.md"), path); err != nil {
					t.Fatal(err)
				}
			}},
		{name: "CRLF", rel: "features/crlf.md", warns: false,
			setup: func(t *testing.T, dir, path string) {
				text := "# Plan: crlf\r\n\r\n- **Value:** high\r\n- **Priority:** P1\r\n- **Preferred models:** mid, Qwen3 32B\r\n" +
					"- **Assignee:** ai\r\n- **Depends on:** base\r\n\r\n## Done when\r\n- done\r\n"
				writeAbs(t, path, text)
				fwtest.WritePlan(t, dir, fwtest.Plan{Rel: "completed/base.md"}, time.Hour)
			},
			read: func(t *testing.T, p map[string]any) {
				if p["title"] != "Plan: crlf" || p["value"] != "high" || p["priority"] != "P1" || p["assignee"] != "ai" || p["agent_assignable"] != true || p["fit"] != "good" {
					t.Errorf("CRLF header: %v", p)
				}
				if got := fwtest.ToStrings(p["preferred"]); len(got) != 2 || got[0] != "mid" || got[1] != "qwen3 32b" {
					t.Errorf("CRLF preferred: %q", got)
				}
				if d := p["deps"].(map[string]any); d["met"] != true {
					t.Errorf("CRLF deps: %v", d)
				}
			}},
		{name: "InvalidUTF8", rel: "features/latin1.md", warns: true,
			setup: func(t *testing.T, dir, path string) {
				writeAbs(t, path, "# Plan: caf\xe9\n\n- **Priority:** P1\n- **Preferred models:** mid\n- **Assignee:** Ren\xe9e\n")
			},
			read: func(t *testing.T, p map[string]any) {
				if p["priority"] != "P1" || p["agent_assignable"] != false {
					t.Errorf("invalid UTF-8 header: %v", p)
				}
				if a, _ := p["assignee"].(string); !strings.HasPrefix(a, "Ren") {
					t.Errorf("assignee %q", a)
				}
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := fwtest.NewTree(t, fwtest.Plan{Rel: "features/normal.md", Fields: "Preferred models: mid"})
			c.setup(t, dir, filepath.Join(dir, ".plans", filepath.FromSlash(c.rel)))

			r := fwtest.Run(t, dir, "work-once", "--list", "--agent-id", "w")
			fwtest.Want(t, r, 0)
			if !strings.Contains(r.Stdout, "features/normal.md\t") {
				t.Errorf("normal plan missing from --list: %v", r)
			}
			m := fwtest.WorkOnceJSON(t, dir, "--agent-id", "w")
			warned := false
			for _, f := range fwtest.JSONWarningFiles(m) {
				warned = warned || f == c.rel
			}
			if warned != c.warns {
				t.Errorf("warning naming %s: got %v, want %v; warnings %v", c.rel, warned, c.warns, m["warnings"])
			}
			listed := false
			for _, p := range m["plans"].([]any) {
				if pm := p.(map[string]any); pm["rel"] == c.rel {
					listed = true
					if c.read == nil {
						t.Errorf("%s must be skipped, got %v", c.rel, pm)
					} else {
						c.read(t, pm)
					}
				}
			}
			if c.read != nil && !listed {
				t.Errorf("%s must be read, plans %v", c.rel, m["plans"])
			}
			// check lists it but does not crash; a bare pick still works.
			rc := fwtest.Run(t, dir, "check")
			if c.warns && (rc.Code != 1 || !strings.Contains(rc.Stdout, c.rel)) {
				t.Errorf("check should report %s: %v", c.rel, rc)
			}
			if strings.Contains(rc.Stderr, "goroutine ") {
				t.Errorf("check crashed: %v", rc)
			}
			ro := fwtest.Run(t, dir, "work-once", "--once", "--agent-id", "w")
			fwtest.Want(t, ro, 0)
		})
	}
}
