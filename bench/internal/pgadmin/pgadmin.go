// Package pgadmin creates and drops the PostgreSQL databases the benchmark
// harnesses run memgate on.
package pgadmin

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

var dbName = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)

// CreateDatabase drops the database name on the server of adminURL (a
// -postgres flag) if it exists and creates it anew, and returns the new
// database's URL. name (a -pg-db flag) must not be adminURL's own database.
func CreateDatabase(ctx context.Context, adminURL, name string) (string, error) {
	u, err := url.Parse(adminURL)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return "", errors.New("-postgres needs a postgres:// URL")
	}
	if !dbName.MatchString(name) {
		return "", fmt.Errorf("-pg-db %q: use lower-case letters, digits and _", name)
	}
	if strings.TrimPrefix(u.Path, "/") == name {
		return "", fmt.Errorf("-pg-db %s is the database of -postgres: it would be dropped, so name another", name)
	}
	if err := DropDatabase(ctx, adminURL, name); err != nil {
		return "", err
	}
	if err := Exec(ctx, adminURL, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		return "", fmt.Errorf("create database %s: %w", name, err)
	}
	u.Path = "/" + name
	return u.String(), nil
}

// DropDatabase drops the database name, closing its connections first.
func DropDatabase(ctx context.Context, adminURL, name string) error {
	if err := Exec(ctx, adminURL, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
		return fmt.Errorf("drop database %s: %w", name, err)
	}
	return nil
}

// Exec runs one statement on a connection of its own to dbURL, within 30 s.
// pgx's errors name the user and database, never the password.
func Exec(ctx context.Context, dbURL, sql string) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	_, err = conn.Exec(ctx, sql)
	return err
}
