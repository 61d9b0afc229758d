module fleetwatch

go 1.26.0

require (
	golang.org/x/sys v0.50.0
	gopkg.in/yaml.v3 v3.0.1
)
