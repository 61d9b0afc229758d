package planfs

import (
	"bufio"
	"bytes"
	"context"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/gitenv"
	"github.com/fleetwatch/fleetwatch/model"
)

// History returns a lazy answer to "was this slug ever in .plans/completed/
// in git?": the first question runs one `git log` over completed/ paths for
// the whole scan, later ones reuse it. Outside a git repo the answer is no.
func (t *Tree) History() model.History {
	var once sync.Once
	var seen map[string]bool
	return func(slug string) bool {
		once.Do(func() { seen = t.completedInGit() })
		return seen[model.DepKey(slug)]
	}
}

func (t *Tree) completedInGit() map[string]bool {
	r, err := gitenv.Run(context.Background(), gitenv.Call{
		Dir:     t.Project,
		Args:    []string{"log", "--all", "--format=", "--name-only", "--relative", "--no-renames", "--", Dir + "/completed/"},
		Timeout: 8 * time.Second,
	})
	seen := map[string]bool{}
	if err != nil {
		return seen
	}
	sc := bufio.NewScanner(bytes.NewReader(r.Out))
	for sc.Scan() {
		p := strings.TrimSpace(sc.Text())
		dir, name := path.Split(p)
		if dir != Dir+"/completed/" || !strings.HasSuffix(name, ".md") {
			continue
		}
		seen[model.DepKey(model.SlugOf(name))] = true
	}
	return seen
}
