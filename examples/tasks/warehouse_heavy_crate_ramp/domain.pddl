(define (domain basic-domain)
  (:requirements :strips :typing :conditional-effects :numeric-fluents)
  (:types location box)
  (:predicates
    (robot_at ?l - location)
    (path ?from - location ?to - location)
    (box_at ?b - box ?l - location)
    (charging_station_at ?l - location)
    (steep_ramp ?from - location ?to - location)
    (box_heavy ?b - box)
  )
  (:functions
    (battery_level)
  )
  (:action move
    :parameters (?from - location ?to - location)
    :precondition (and (robot_at ?from) (path ?from ?to) (>= (battery_level) 5) (not (robot_at ?to)))
    :effect (and (robot_at ?to) (not (robot_at ?from)) (decrease (battery_level) 5)))
  (:action move_box
    :parameters (?b - box ?from - location ?to - location)
    :precondition (and (robot_at ?from) (box_at ?b ?from) (path ?from ?to) (>= (battery_level) 10) (not (robot_at ?to)))
    :effect (and (robot_at ?to) (not (robot_at ?from)) (box_at ?b ?to) (not (box_at ?b ?from)) (decrease (battery_level) 10)))
  (:action recharge
    :parameters (?l - location)
    :precondition (and (robot_at ?l) (charging_station_at ?l) (< (battery_level) 100))
    :effect (and (assign (battery_level) 100)))
)
