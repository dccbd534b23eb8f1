(define (domain basic-domain)
  (:requirements :strips :typing :negative-preconditions :conditional-effects)
  (:types item receptacle - object container - item)
  (:constants box - container cell_phone - item)
  (:predicates
    (holding ?i - item)
    (hands_free)
    (in ?i - item ?b - container)
    (on ?i - item ?r - receptacle)
    (box_open ?b - container)
  )
  (:action pick_up
    :parameters (?i - item ?r - receptacle)
    :precondition (and (on ?i ?r) (hands_free))
    :effect (and (holding ?i) (not (on ?i ?r)) (not (hands_free))))
  (:action put_on
    :parameters (?i - item ?r - receptacle)
    :precondition (holding ?i)
    :effect (and (on ?i ?r) (hands_free) (not (holding ?i))))
  (:action open_box
    :parameters (?b - container)
    :precondition (and (not (box_open ?b)) (not (in cell_phone ?b)))
    :effect (box_open ?b))
  (:action close_box
    :parameters (?b - container)
    :precondition (box_open ?b)
    :effect (not (box_open ?b)))
  (:action put_in
    :parameters (?i - item ?b - container)
    :precondition (and (box_open ?b) (holding ?i))
    :effect (and (in ?i ?b) (hands_free) (not (holding ?i))))
)
