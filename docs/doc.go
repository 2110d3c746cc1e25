// Package docs holds the project's prose documentation (Markdown). Its only
// code is a test: every BR-, NC- or § id a .go file cites must have its line
// in glossary.md, so that a reader can look the id up.
package docs
