package harness

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
)

// localImage is the image scripts/build-image.sh builds for a version.
func localImage(version string) string { return "cqlsafe/cassandra:" + version + "-local" }

// imageCandidates are the images the Docker path may run, best first: the one named by
// CQLSAFE_CASSANDRA_IMAGE or WithImage alone; otherwise the official image for the
// version (cassandra:5.0 by default) and cqlsafe's locally built one.
func imageCandidates(c config) (candidates []string, pullable string) {
	if c.imageSet {
		return []string{c.image}, c.image
	}
	official := DefaultImage
	if c.versionSet {
		official = "cassandra:" + c.version
	}
	return []string{official, localImage(c.version)}, official
}

// pickImage asks the Docker daemon for an image it can run: one present locally, else
// the official one pulled. No daemon, or nothing present and no pull possible, is a
// PathError and Start moves on to the next path.
func pickImage(ctx context.Context, c config) (img string, err error) {
	// testcontainers-go and the Docker client panic in a few environments without Docker;
	// that is "unavailable".
	defer func() {
		if r := recover(); r != nil {
			err = pathErr("docker", fmt.Sprintf("docker client: %v", r), "start Docker, or let the native node run")
		}
	}()
	cli, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err != nil {
		return "", pathErr("docker", "no Docker daemon found (testcontainers-go: "+firstLine(err.Error())+")", "start Docker")
	}
	defer cli.Close()
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := cli.Ping(pctx, client.PingOptions{}); err != nil {
		return "", pathErr("docker", "no Docker daemon answers ("+firstLine(err.Error())+")", "start Docker")
	}
	cands, pullable := imageCandidates(c)
	for _, img := range cands {
		if _, err := cli.ImageInspect(ctx, img); err == nil {
			c.progress("docker: image " + img + " is present")
			return img, nil
		}
	}
	c.progress("docker: pulling " + pullable)
	resp, err := cli.ImagePull(ctx, pullable, client.ImagePullOptions{})
	if err == nil {
		err = resp.Wait(ctx)
	}
	if err != nil {
		return "", pathErr("docker", fmt.Sprintf("none of %s is present and pulling %s failed (%s)",
			strings.Join(cands, ", "), pullable, firstLine(err.Error())),
			"build a local image with scripts/build-image.sh, or let the native node run")
	}
	return pullable, nil
}
