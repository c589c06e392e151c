"""The run as a library (DESIGN §7): a script taken in (`intake`), run (`run_api`, which is
`maned.run()`), and what it did as a Report (`report`)."""
