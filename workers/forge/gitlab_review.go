package forge

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go/v2"
)

// GitLab's statuses, notes, approvals, the token's user and the target
// branch's protection.

// glStatusStates are a Status's states as GitLab's commit statuses.
var glStatusStates = map[string]gitlab.BuildStateValue{
	StatusPending: gitlab.Pending, StatusSuccess: gitlab.Success,
	StatusFailure: gitlab.Failed, StatusError: gitlab.Failed,
}

// SetStatus posts s on commit as an external commit status named after
// s.Context.
func (g *gitLab) SetStatus(ctx context.Context, commit string, s Status) error {
	st, ok := glStatusStates[s.State]
	if !ok {
		return fmt.Errorf("forge: gitlab: status %s: state %q: want pending, success, failure or error", s.Context, s.State)
	}
	opts := &gitlab.SetCommitStatusOptions{State: st, Name: gitlab.Ptr(s.Context), Description: gitlab.Ptr(clip(s.Description, 140))}
	if s.TargetURL != "" {
		opts.TargetURL = gitlab.Ptr(s.TargetURL)
	}
	_, resp, err := g.client.Commits.SetCommitStatus(g.project, commit, opts, gitlab.WithContext(ctx))
	return glErr(fmt.Sprintf("status %s on %s", s.Context, commit), resp, err)
}

// Review starts a thread on the MR at r.Commit. GitLab's only review
// verdict is an approval, which fleetwatch never gives; asking for
// changes is a thread that says so.
func (g *gitLab) Review(ctx context.Context, number int, r ReviewIn) error {
	body := r.Body
	if r.RequestChanges {
		body = "Changes requested: " + body
	}
	opts := &gitlab.CreateMergeRequestDiscussionOptions{Body: gitlab.Ptr(body)}
	if r.Commit != "" {
		opts.CommitID = gitlab.Ptr(r.Commit)
	}
	_, resp, err := g.client.Discussions.CreateMergeRequestDiscussion(g.project, int64(number), opts, gitlab.WithContext(ctx))
	return glErr(fmt.Sprintf("review MR %d", number), resp, err)
}

// Reviews are the MR's approvals. GitLab does not say which commit an
// approval was given on, so each is bound to the head of the MR's newest
// diff version created at or before the approval (one more call, all
// pages); an approval with no time has no commit, and so counts for none.
func (g *gitLab) Reviews(ctx context.Context, number int) ([]Review, error) {
	ap, resp, err := g.client.MergeRequestApprovals.GetConfiguration(g.project, int64(number), gitlab.WithContext(ctx))
	if err != nil {
		return nil, glErr(fmt.Sprintf("the approvals of MR %d", number), resp, err)
	}
	if ap == nil {
		return nil, errNoAnswer(fmt.Sprintf("the approvals of MR %d", number))
	}
	var out []Review
	for _, a := range ap.ApprovedBy {
		if a == nil || a.User == nil || a.User.Username == "" {
			continue
		}
		r := Review{ID: a.User.ID, Author: a.User.Username, State: ReviewApproved}
		if a.ApprovedAt != nil {
			r.At = *a.ApprovedAt
		}
		out = append(out, r)
	}
	if len(out) == 0 {
		return out, nil
	}
	versions, err := g.versions(ctx, number)
	if err != nil {
		return nil, err
	}
	for i := range out {
		out[i].Commit = headAt(versions, out[i].At)
	}
	return out, nil
}

// versions are MR number's diff versions, all pages.
func (g *gitLab) versions(ctx context.Context, number int) ([]*gitlab.MergeRequestDiffVersion, error) {
	return glAll(fmt.Sprintf("the versions of MR %d", number), func(lo gitlab.ListOptions) ([]*gitlab.MergeRequestDiffVersion, *gitlab.Response, error) {
		opts := &gitlab.GetMergeRequestDiffVersionsOptions{ListOptions: lo}
		return g.client.MergeRequests.GetMergeRequestDiffVersions(g.project, int64(number), opts, gitlab.WithContext(ctx))
	})
}

// headAt is the head commit of the newest version created at or before
// at; "" when at is unknown or precedes them all.
func headAt(versions []*gitlab.MergeRequestDiffVersion, at time.Time) string {
	if at.IsZero() {
		return ""
	}
	var best *gitlab.MergeRequestDiffVersion
	for _, v := range versions {
		if v == nil || v.CreatedAt == nil || v.CreatedAt.After(at) || !isSHA(v.HeadCommitSHA) {
			continue
		}
		if best == nil || v.CreatedAt.After(*best.CreatedAt) {
			best = v
		}
	}
	if best == nil {
		return ""
	}
	return best.HeadCommitSHA
}

// Comments are the MR's notes by people (system notes left out), all
// pages; a diff note carries its file and line.
func (g *gitLab) Comments(ctx context.Context, number int) ([]Comment, error) {
	ns, err := glAll(fmt.Sprintf("the notes of MR %d", number), func(lo gitlab.ListOptions) ([]*gitlab.Note, *gitlab.Response, error) {
		opts := &gitlab.ListMergeRequestNotesOptions{ListOptions: lo}
		return g.client.Notes.ListMergeRequestNotes(g.project, int64(number), opts, gitlab.WithContext(ctx))
	})
	var out []Comment
	for _, n := range ns {
		if n != nil && !n.System {
			out = append(out, glComment(n))
		}
	}
	return out, err
}

func glComment(n *gitlab.Note) Comment {
	c := Comment{ID: n.ID, Author: n.Author.Username, Body: n.Body}
	if n.CreatedAt != nil {
		c.At = *n.CreatedAt
	}
	if p := n.Position; p != nil {
		c.Path, c.Line = p.NewPath, int(p.NewLine)
		if c.Path == "" || c.Line == 0 { // a note on a removed line
			c.Path, c.Line = p.OldPath, int(p.OldLine)
		}
	}
	return c
}

// Comment posts body as a note on MR number.
func (g *gitLab) Comment(ctx context.Context, number int, body string) error {
	_, resp, err := g.client.Notes.CreateMergeRequestNote(g.project, int64(number), &gitlab.CreateMergeRequestNoteOptions{Body: gitlab.Ptr(body)}, gitlab.WithContext(ctx))
	return glErr(fmt.Sprintf("comment on MR %d", number), resp, err)
}

// Me is the token's user and, for a personal token, its scopes (nil for
// other tokens, which cannot read themselves there).
func (g *gitLab) Me(ctx context.Context) (User, error) {
	u, err := g.me(ctx)
	if err != nil {
		return User{}, err
	}
	out := User{Login: u.Username}
	tok, _, err := g.client.PersonalAccessTokens.GetSinglePersonalAccessToken(gitlab.WithContext(ctx))
	if ctx.Err() != nil {
		return User{}, ctx.Err()
	}
	if err == nil && tok != nil {
		out.Scopes = []string{}
		for _, s := range tok.Scopes {
			out.Scopes = append(out.Scopes, clip(s, 64))
		}
	}
	return out, nil
}

func (g *gitLab) me(ctx context.Context) (*gitlab.User, error) {
	u, resp, err := g.client.Users.CurrentUser(gitlab.WithContext(ctx))
	if err != nil {
		return nil, glErr("the token's user", resp, err)
	}
	if u == nil || u.Username == "" {
		return nil, fmt.Errorf("forge: gitlab: the token's user has no username")
	}
	return u, nil
}

// Writer looks login up and asks for its access to the project, its
// groups' included: a developer or above may push. A login the forge
// does not know, or a user who is no member, is no writer.
func (g *gitLab) Writer(ctx context.Context, login string) (bool, error) {
	if login == "" {
		return false, nil
	}
	us, resp, err := g.client.Users.ListUsers(&gitlab.ListUsersOptions{Username: gitlab.Ptr(login)}, gitlab.WithContext(ctx))
	if err != nil {
		return false, glErr("the user "+login, resp, err)
	}
	i := slices.IndexFunc(us, func(u *gitlab.User) bool { return u != nil && strings.EqualFold(u.Username, login) })
	if i < 0 {
		return false, nil
	}
	m, resp, err := g.client.ProjectMembers.GetInheritedProjectMember(g.project, us[i].ID, gitlab.WithContext(ctx))
	switch {
	case glCode(resp, err) == http.StatusNotFound:
		return false, nil
	case err != nil:
		return false, glErr("the access of "+login, resp, err)
	}
	return m != nil && m.AccessLevel >= gitlab.DeveloperPermissions, nil
}

// Protection reads the project (the token's access, merge trains), the
// branch's protection and the project's approval rules (their first 100).
// Approvals is the most any one rule on the branch asks. Checks stay
// empty: GitLab asks for a passing pipeline, not for named statuses.
func (g *gitLab) Protection(ctx context.Context, branch string) (Protection, error) {
	p, resp, err := g.client.Projects.GetProject(g.project, nil, gitlab.WithContext(ctx))
	if err != nil {
		return Protection{}, glErr("the project", resp, err)
	}
	if p == nil {
		return Protection{}, errNoAnswer("the project")
	}
	out := Protection{MergeQueue: p.MergeTrainsEnabled}
	if out.Protected, out.PushAllowed, err = g.push(ctx, branch, glAccess(p.Permissions)); err != nil {
		return Protection{}, err
	}
	out.Approvals, err = g.approvals(ctx, branch)
	return out, err
}

// push reads whether branch is protected and whether the token's user,
// at access level, may push to it.
func (g *gitLab) push(ctx context.Context, branch string, level gitlab.AccessLevelValue) (protected, allowed bool, err error) {
	pb, resp, err := g.client.ProtectedBranches.GetProtectedBranch(g.project, branch, gitlab.WithContext(ctx))
	switch {
	case glCode(resp, err) == http.StatusNotFound:
		return false, level >= gitlab.DeveloperPermissions, nil
	case err != nil:
		return false, false, glErr("the protection of "+branch, resp, err)
	case pb == nil:
		return false, false, errNoAnswer("the protection of " + branch)
	}
	u, err := g.me(ctx)
	if err != nil {
		return false, false, err
	}
	return true, slices.ContainsFunc(pb.PushAccessLevels, func(a *gitlab.BranchAccessDescription) bool { return glMayPush(a, u.ID, level) }), nil
}

// approvals is the most approvals any one rule on branch asks; GitLab
// Free has no rules to read (403, 404), which is none.
func (g *gitLab) approvals(ctx context.Context, branch string) (int, error) {
	opts := &gitlab.GetProjectApprovalRulesListsOptions{ListOptions: gitlab.ListOptions{PerPage: 100}}
	rules, resp, err := g.client.Projects.GetProjectApprovalRules(g.project, opts, gitlab.WithContext(ctx))
	if code := glCode(resp, err); err != nil && code != http.StatusNotFound && code != http.StatusForbidden {
		return 0, glErr("the approval rules", resp, err)
	}
	n := 0
	for _, r := range rules {
		if r != nil && glRuleApplies(r, branch) {
			n = max(n, int(r.ApprovalsRequired))
		}
	}
	return n, nil
}

// glAccess is the token's user's access to the project, the higher of
// its own and its group's.
func glAccess(p *gitlab.Permissions) gitlab.AccessLevelValue {
	var level gitlab.AccessLevelValue
	if p == nil {
		return level
	}
	if p.ProjectAccess != nil {
		level = p.ProjectAccess.AccessLevel
	}
	if p.GroupAccess != nil {
		level = max(level, p.GroupAccess.AccessLevel)
	}
	return level
}

// glMayPush reports whether one push access entry lets user id at access
// level push; a group's or a deploy key's entry is not assumed to.
func glMayPush(a *gitlab.BranchAccessDescription, id int64, level gitlab.AccessLevelValue) bool {
	switch {
	case a == nil:
		return false
	case a.UserID != 0:
		return a.UserID == id
	case a.GroupID != 0 || a.DeployKeyID != 0:
		return false
	}
	return a.AccessLevel > gitlab.NoPermissions && level >= a.AccessLevel
}

// glRuleApplies reports whether an approval rule covers branch: a rule
// with no branches covers them all.
func glRuleApplies(r *gitlab.ProjectApprovalRule, branch string) bool {
	if r.AppliesToAllProtectedBranches || len(r.ProtectedBranches) == 0 {
		return true
	}
	return slices.ContainsFunc(r.ProtectedBranches, func(b *gitlab.ProtectedBranch) bool { return b != nil && b.Name == branch })
}
